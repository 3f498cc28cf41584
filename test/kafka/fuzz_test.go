package kafka

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// servedVersions asks a broker which API versions it serves.
func servedVersions(t testing.TB, addr string) []kmsg.ApiVersionsResponseApiKey {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kairolog-test", "1"
	resp := rawRoundTrip(t, addr, req).(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		t.Fatalf("ApiVersions: error %d, %d keys", resp.ErrorCode, len(resp.ApiKeys))
	}
	return resp.ApiKeys
}

// TestEveryAPIAtEveryVersionAnswers sends every API the broker advertises,
// at every version it advertises, as kmsg encodes the request's defaults
// (empty lists, empty names), to the Kafka listener and the gateway of a
// real broker: each is answered with a reply that decodes at the
// request's version, on a connection that stays open.
func TestEveryAPIAtEveryVersionAnswers(t *testing.T) {
	c := startCluster(t, 1, nil)
	for _, addr := range []string{c.KafkaAddress(0), c.GatewayAddress(0)} {
		for _, k := range servedVersions(t, addr) {
			for v := k.MinVersion; v <= k.MaxVersion; v++ {
				req := kmsg.RequestForKey(k.ApiKey)
				req.SetVersion(v)
				if p, ok := req.(*kmsg.ProduceRequest); ok {
					p.Acks = 1 // acks 0 has no reply
				}
				rawRoundTrip(t, addr, req)
			}
		}
	}
}

// FuzzRequestBodies sends a real broker requests of every API and version
// with arbitrary bodies: the broker must answer or close the connection,
// never hang it, and keep serving others. The corpus seeds are every
// served API at every version as kmsg encodes its defaults; the first four
// bytes of an input are the key and version, the rest the body.
//
//	go test ./test/kafka/ -run '^$' -fuzz FuzzRequestBodies -fuzztime 2m
func FuzzRequestBodies(f *testing.F) {
	if testing.Short() {
		f.Skip("starts a broker process")
	}
	c := startCluster(f, 1, nil)
	addr := c.KafkaAddress(0)
	for _, k := range servedVersions(f, addr) {
		for v := k.MinVersion; v <= k.MaxVersion; v++ {
			req := kmsg.RequestForKey(k.ApiKey)
			req.SetVersion(v)
			if p, ok := req.(*kmsg.ProduceRequest); ok {
				p.Acks = 1 // acks 0 has no reply
			}
			seed := binary.BigEndian.AppendUint16(nil, uint16(k.ApiKey))
			seed = binary.BigEndian.AppendUint16(seed, uint16(v))
			f.Add(req.AppendTo(seed))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		key, version := int16(binary.BigEndian.Uint16(data)), int16(binary.BigEndian.Uint16(data[2:]))
		frame := kbin.AppendInt16(nil, key)
		frame = kbin.AppendInt16(frame, version)
		frame = kbin.AppendInt32(frame, 7)
		frame = kbin.AppendNullableString(frame, kmsg.StringPtr("fuzz"))
		if req := kmsg.RequestForKey(key); req != nil {
			req.SetVersion(version)
			if req.IsFlexible() && key != 18 {
				frame = append(frame, 0) // header tags
			}
		}
		frame = append(frame, data[4:]...)
		sendFuzzedFrame(t, addr, frame)
		// The broker still serves a fresh connection.
		_ = servedVersions(t, addr)
		if _, err := os.FindProcess(c.PID(0)); err != nil || !c.Running(0) {
			t.Fatal("the broker process exited")
		}
	})
}

// sendFuzzedFrame sends one request frame and waits for its reply or for
// the broker to close the connection, up to 5 s (the fuzzing engine takes
// an input that runs 10 s for a hang). Three requests may rightly stay
// unanswered that long, waiting as the client asked: a produce (acks 0 is
// never answered, acks all waits up to its timeout), a fetch (up to its max
// wait) and a join (up to the group's rebalance timeout).
func sendFuzzedFrame(t *testing.T, addr string, body []byte) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	frame = append(frame, body...)
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write(frame); err != nil {
		return // closed already: allowed
	}
	var size [4]byte
	_, err = io.ReadFull(conn, size[:])
	var ne net.Error
	switch {
	case err == nil:
		n := binary.BigEndian.Uint32(size[:])
		if n > 64<<20 {
			t.Fatalf("a %d-byte reply to a %d-byte request", n, len(body))
		}
		if _, err := io.ReadFull(conn, make([]byte, n)); err != nil {
			t.Fatalf("reply cut short: %v", err)
		}
	case errors.As(err, &ne) && ne.Timeout():
		switch key := int16(binary.BigEndian.Uint16(body)); key {
		case 0, 1, 11:
			return // waiting as the client asked
		default:
			t.Fatalf("no reply and no close in 5 s for %s", kmsg.NameForKey(key))
		}
	}
}
