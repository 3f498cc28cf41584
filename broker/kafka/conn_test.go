package kafka

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/memory"
)

// startServer serves a framing-only Server on a loopback port.
func startServer(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(opts)
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { s.Close() })
	return s, ln.Addr().String()
}

// TestApiVersionsEveryVersion: every ApiVersions version is answered with
// every served API's range, in a v0 reply header even when flexible.
func TestApiVersionsEveryVersion(t *testing.T) {
	_, addr := startServer(t, Options{})
	c := dialRaw(t, addr)
	for v := int16(0); v <= 5; v++ {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName, req.ClientSoftwareVersion = "kgo", "1.22.3"
		resp := c.roundTrip(req).(*kmsg.ApiVersionsResponse)
		if resp.ErrorCode != 0 {
			t.Fatalf("v%d: error %d", v, resp.ErrorCode)
		}
		found := false
		for _, k := range resp.ApiKeys {
			if k.ApiKey == 18 {
				found = k.MinVersion == 0 && k.MaxVersion == 5
			}
		}
		if !found {
			t.Fatalf("v%d: ApiVersions 0..5 not listed in %+v", v, resp.ApiKeys)
		}
	}
}

// TestApiVersionsChecksSoftwareName: v3+ refuses a client software name
// Kafka refuses, with INVALID_REQUEST.
func TestApiVersionsChecksSoftwareName(t *testing.T) {
	_, addr := startServer(t, Options{})
	c := dialRaw(t, addr)
	for _, tc := range []struct {
		name, version string
		code          int16
	}{
		{"librdkafka", "2.0.2", 0},
		{"franz-go", "v1.22.3", 0},
		{"", "1.0", kerr.InvalidRequest.Code},
		{"bad name", "1.0", kerr.InvalidRequest.Code},
		{"client", "1.0-", kerr.InvalidRequest.Code},
	} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		req.ClientSoftwareName, req.ClientSoftwareVersion = tc.name, tc.version
		if got := c.roundTrip(req).(*kmsg.ApiVersionsResponse).ErrorCode; got != tc.code {
			t.Errorf("%q %q: error %d, want %d", tc.name, tc.version, got, tc.code)
		}
	}
}

// TestApiVersionsChecksIdentity: v5 answers REBOOTSTRAP_REQUIRED to a
// client that believes it reached another cluster or broker, and
// INVALID_REQUEST to one that names only one of them.
func TestApiVersionsChecksIdentity(t *testing.T) {
	_, addr := startServer(t, Options{NodeID: 2, ClusterID: func() string { return "cluster-a" }})
	c := dialRaw(t, addr)
	for _, tc := range []struct {
		cluster *string
		node    int32
		code    int16
	}{
		{nil, -1, 0},
		{kmsg.StringPtr("cluster-a"), 2, 0},
		{kmsg.StringPtr("cluster-a"), 1, kerr.RebootstrapRequired.Code},
		{kmsg.StringPtr("cluster-b"), 2, kerr.RebootstrapRequired.Code},
		{kmsg.StringPtr("cluster-a"), -1, kerr.InvalidRequest.Code},
		{nil, 2, kerr.InvalidRequest.Code},
	} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 5
		req.ClientSoftwareName, req.ClientSoftwareVersion = "kgo", "1"
		req.ClusterID, req.NodeID = tc.cluster, tc.node
		if got := c.roundTrip(req).(*kmsg.ApiVersionsResponse).ErrorCode; got != tc.code {
			t.Errorf("cluster %v node %d: error %d, want %d", tc.cluster, tc.node, got, tc.code)
		}
	}
}

// TestUnsupportedRequestsAreAnswered: an unknown API key, an ApiVersions
// newer than served, and a key kmsg knows but this listener does not serve
// each get the ApiVersions v0 reply with UNSUPPORTED_VERSION under their
// correlation id, and the connection goes on serving.
func TestUnsupportedRequestsAreAnswered(t *testing.T) {
	_, addr := startServer(t, Options{})
	c := dialRaw(t, addr)
	for _, tc := range []struct {
		name         string
		key, version int16
		body         []byte
	}{
		{"unknown key", 999, 0, nil},
		{"negative key", -1, 0, nil},
		{"ApiVersions v99", 18, 99, []byte{0, 0}},
		{"LeaderAndIsr (broker-internal)", 4, 0, []byte{1, 2, 3}},
	} {
		frame := kbin.AppendInt16(nil, tc.key)
		frame = kbin.AppendInt16(frame, tc.version)
		frame = kbin.AppendInt32(frame, 77)
		frame = kbin.AppendNullableString(frame, nil)
		frame = append(frame, tc.body...)
		c.write(binary.BigEndian.AppendUint32(nil, uint32(len(frame))))
		c.write(frame)
		corr, body, err := c.readFrame()
		if err != nil {
			t.Fatalf("%s: no reply: %v", tc.name, err)
		}
		if corr != 77 {
			t.Fatalf("%s: correlation id %d, want 77", tc.name, corr)
		}
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = 0
		if err := resp.ReadFrom(body); err != nil {
			t.Fatalf("%s: reply is not ApiVersions v0: %v", tc.name, err)
		}
		if resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) == 0 {
			t.Fatalf("%s: error %d with %d ranges, want UNSUPPORTED_VERSION and the ranges", tc.name, resp.ErrorCode, len(resp.ApiKeys))
		}
		// The connection still serves.
		req := kmsg.NewPtrApiVersionsRequest()
		if c.roundTrip(req).(*kmsg.ApiVersionsResponse).ErrorCode != 0 {
			t.Fatalf("%s: the next request failed", tc.name)
		}
	}
}

// TestFrameLimits: a frame beyond socket.request.max.bytes, a negative or
// too short size, and a body that does not decode close the connection, as
// Kafka does; a frame of exactly the limit is read.
func TestFrameLimits(t *testing.T) {
	const limit = 1 << 10
	_, addr := startServer(t, Options{MaxRequestBytes: limit})
	apiVersions := func(pad int) []byte {
		frame := kbin.AppendInt16(nil, 18)
		frame = kbin.AppendInt16(frame, 0)
		frame = kbin.AppendInt32(frame, 1)
		frame = kbin.AppendNullableString(frame, nil)
		return append(frame, make([]byte, pad)...) // v0 ignores trailing bytes
	}
	for _, tc := range []struct {
		name   string
		size   uint32
		frame  []byte
		closes bool
	}{
		{"one byte over the limit", limit + 1, nil, true},
		{"4 GiB", 0xffffffff, nil, true},
		{"negative", 0x80000000, nil, true},
		{"shorter than a header", 3, []byte{0, 18, 0}, true},
		{"exactly the limit", limit, apiVersions(limit - 10), false},
		{"a truncated body", 12, func() []byte {
			f := kbin.AppendInt16(nil, 18) // ApiVersions v3: a 100-byte name that is not there
			f = kbin.AppendInt16(f, 3)
			f = kbin.AppendInt32(f, 1)
			f = kbin.AppendNullableString(f, nil)
			return append(f, 0, 101)
		}(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			c.write(binary.BigEndian.AppendUint32(nil, tc.size))
			if tc.frame != nil {
				c.write(tc.frame)
			}
			if got := c.closedByPeer(); got != tc.closes {
				t.Fatalf("closed: %v, want %v", got, tc.closes)
			}
		})
	}
}

// TestRegisteredVersionsReachKmsg: every served API goes up to the newest
// version kmsg decodes (clients such as kafkajs send their own maximum), so
// a kmsg upgrade that adds versions shows here until its handler serves
// them.
func TestRegisteredVersionsReachKmsg(t *testing.T) {
	for key, a := range apis {
		if kmax := kmsg.RequestForKey(key).MaxVersion(); a.max != kmax {
			t.Errorf("%s serves up to v%d, kmsg decodes up to v%d", kmsg.NameForKey(key), a.max, kmax)
		}
	}
}

// TestFrameWaitsForMemory: a frame that does not fit the request pool is
// not read, and not refused, until other requests give memory back; the
// connection then goes on.
func TestFrameWaitsForMemory(t *testing.T) {
	pool := memory.NewPool("queued.max.request.bytes", 64<<10, 0)
	_, addr := startServer(t, Options{Memory: pool})
	other := memory.NewAccount(false)
	if err := other.Charge(pool, 60<<10); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, addr)
	corr := c.send(kmsg.NewPtrApiVersionsRequest())
	_ = c.conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var b [1]byte
	if _, err := c.conn.Read(b[:]); err == nil {
		t.Fatal("answered while the pool was full")
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("the connection ended while the pool was full: %v", err)
	}
	other.Release()
	got, _, err := c.readFrame()
	if err != nil || got != corr {
		t.Fatalf("after the pool emptied: correlation %d, %v; want %d", got, err, corr)
	}
	if pool.InUse() != 0 {
		t.Fatalf("%d bytes still charged after the reply", pool.InUse())
	}
}
