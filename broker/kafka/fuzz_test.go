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

	"github.com/kairolog/kairolog/broker/memory"
)

// FuzzFrames feeds a connection arbitrary bytes: frames of any size,
// truncated ones, headers of any key and version, bodies that do not
// decode. The listener must never panic, must answer or close, and must
// give back every byte it charged to the request pool.
func FuzzFrames(f *testing.F) {
	for _, frame := range seedFrames() {
		f.Add(frame)
		f.Add(frame[:len(frame)/2])
		f.Add(append(append([]byte{}, frame...), frame...))
	}
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff})
	f.Add([]byte{0xff, 0xff, 0xff, 0xf0, 0, 0})
	f.Add([]byte{0, 0, 0, 10, 0, 18, 0x7f, 0xff, 0, 0, 0, 1, 0xff, 0xff})

	pool := memory.NewPool("queued.max.request.bytes", 64<<20, 0)
	s := New(Options{Memory: pool, MaxRequestBytes: 1 << 20, IOTimeout: time.Second, IdleTimeout: time.Second})
	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := net.Pipe()
		go func() {
			_, _ = client.Write(data)
			client.Close()
		}()
		c := &conn{s: s, nc: server, br: bufio.NewReader(server)}
		// Replies go nowhere: what matters is that answering does not fail.
		replies, drained := net.Pipe()
		go func() { _, _ = io.Copy(io.Discard, drained) }()
		c.nc = pipeConn{read: server, write: replies}
		for {
			req, err := c.readRequest(context.Background())
			if err != nil {
				break
			}
			if a, ok := serves(req.key, req.version); !ok || a.key == 18 {
				if err := c.answer(context.Background(), req); err != nil {
					t.Fatalf("answering key %d v%d: %v", req.key, req.version, err)
				}
			}
			req.account.Release() // answer released it; twice is harmless
		}
		replies.Close()
		server.Close()
		if in := pool.InUse(); in != 0 {
			t.Fatalf("%d bytes still charged after every request ended", in)
		}
	})
}

// pipeConn reads from one pipe and writes to another.
type pipeConn struct {
	read, write net.Conn
}

func (p pipeConn) Read(b []byte) (int, error)         { return p.read.Read(b) }
func (p pipeConn) Write(b []byte) (int, error)        { return p.write.Write(b) }
func (p pipeConn) Close() error                       { p.write.Close(); return p.read.Close() }
func (p pipeConn) LocalAddr() net.Addr                { return p.read.LocalAddr() }
func (p pipeConn) RemoteAddr() net.Addr               { return p.read.RemoteAddr() }
func (p pipeConn) SetDeadline(t time.Time) error      { return p.read.SetDeadline(t) }
func (p pipeConn) SetReadDeadline(t time.Time) error  { return p.read.SetReadDeadline(t) }
func (p pipeConn) SetWriteDeadline(t time.Time) error { return p.write.SetWriteDeadline(t) }

// seedFrames are well-formed frames of every served API at every version,
// as kmsg encodes their defaults.
func seedFrames() [][]byte {
	var out [][]byte
	for key, a := range apis {
		for v := a.min; v <= a.max; v++ {
			req := kmsg.RequestForKey(key)
			req.SetVersion(v)
			out = append(out, kmsg.NewRequestFormatter().AppendRequest(nil, req, int32(v)))
		}
	}
	return out
}

// TestFuzzSeedsDecode keeps the seed corpus honest: every seed frame is a
// whole frame that decodes.
func TestFuzzSeedsDecode(t *testing.T) {
	s := New(Options{})
	c := &conn{s: s}
	for _, frame := range seedFrames() {
		size := binary.BigEndian.Uint32(frame)
		if int(size) != len(frame)-4 {
			t.Fatalf("frame size %d, %d bytes follow", size, len(frame)-4)
		}
		req, err := c.decode(context.Background(), frame[4:], memory.NewAccount(true))
		if err != nil || req.body == nil {
			t.Fatalf("seed frame does not decode: %v", err)
		}
		req.account.Release()
	}
}
