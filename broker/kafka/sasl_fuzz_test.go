package kafka

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/auth"
	"github.com/kairolog/kairolog/broker/memory"
)

// FuzzSASLExchange feeds a SASL listener a handshake for a mechanism and
// then arbitrary exchange bytes: as the messages of SaslAuthenticate
// requests (after a v1 handshake) or as a raw stream of tokens (after a
// v0 one). The listener must never panic, must never authenticate anyone
// (no fuzzed proof matches alice's credential), and must give back every
// byte it charged to the request pool.
func FuzzSASLExchange(f *testing.F) {
	f.Add(false, "SCRAM-SHA-512", []byte("n,,n=alice,r=rOprNGfwEbeRWgbNEkqO"), []byte("c=biws,r=rOprNGfwEbeRWgbNEkqO,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))
	f.Add(true, "SCRAM-SHA-512", []byte("n,a=alice,n=alice,r=x"), []byte("\x00\x00\x00\x05c=,r="))
	f.Add(false, "PLAIN", []byte("\x00alice\x00alice-pw"), []byte{})
	f.Add(true, "PLAIN", []byte("alice\x00alice\x00"), []byte("\x00\x00\x00\x00"))
	f.Add(false, "SCRAM-SHA-512", []byte("n,,n=al=2Cice=3D,r=\x01"), []byte(",p="))
	f.Add(true, "SCRAM-SHA-512", []byte{}, []byte("\xff\xff\xff\xff"))

	users := saslUsers(f)
	pool := memory.NewPool("queued.max.request.bytes", 64<<20, 0)
	s := New(Options{Memory: pool, MaxRequestBytes: 1 << 20, IOTimeout: time.Second, IdleTimeout: time.Second,
		Security: auth.Listener{Authentication: auth.AuthSCRAM}, Users: users})
	f.Fuzz(func(t *testing.T, raw bool, mechanism string, first, rest []byte) {
		var in []byte
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Mechanism = mechanism
		if raw {
			hs.Version = 0
		} else {
			hs.Version = 1
		}
		formatter := kmsg.NewRequestFormatter()
		in = formatter.AppendRequest(in, hs, 1)
		if raw {
			in = binary.BigEndian.AppendUint32(in, uint32(len(first)))
			in = append(in, first...)
			in = append(in, rest...)
		} else {
			for i, msg := range [][]byte{first, rest} {
				a := kmsg.NewPtrSASLAuthenticateRequest()
				a.Version, a.SASLAuthBytes = int16(i), msg
				in = formatter.AppendRequest(in, a, int32(2+i))
			}
		}
		client, server := net.Pipe()
		go func() {
			_, _ = client.Write(in)
			client.Close()
		}()
		replies, drained := net.Pipe()
		go func() { _, _ = io.Copy(io.Discard, drained) }()
		nc := pipeConn{read: server, write: replies}
		c := &conn{s: s, nc: nc, br: bufio.NewReader(nc)}
		id, _, ok := c.authenticate(context.Background())
		replies.Close()
		server.Close()
		if ok {
			t.Fatalf("fuzzed bytes authenticated %s", id.principal)
		}
		if in := pool.InUse(); in != 0 {
			t.Fatalf("%d bytes still charged after the exchange ended", in)
		}
	})
}
