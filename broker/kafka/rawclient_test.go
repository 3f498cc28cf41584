package kafka

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawClient speaks the framing by hand over one connection, so that tests
// can send what no well-behaved client sends and read exactly what comes
// back.
type rawClient struct {
	t    *testing.T
	conn net.Conn
	corr int32
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, conn: c}
}

// send writes req at its version with the next correlation id and returns
// that id.
func (c *rawClient) send(req kmsg.Request) int32 {
	c.t.Helper()
	c.corr++
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw-test")).AppendRequest(nil, req, c.corr)
	c.write(frame)
	return c.corr
}

func (c *rawClient) write(b []byte) {
	c.t.Helper()
	_ = c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.conn.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// readFrame reads one reply frame: its correlation id and the rest.
func (c *rawClient) readFrame() (int32, []byte, error) {
	_ = c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c.conn, size[:]); err != nil {
		return 0, nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c.conn, body); err != nil {
		return 0, nil, err
	}
	return int32(binary.BigEndian.Uint32(body)), body[4:], nil
}

// roundTrip sends req and decodes its reply at the request's version.
func (c *rawClient) roundTrip(req kmsg.Request) kmsg.Response {
	c.t.Helper()
	corr := c.send(req)
	got, body, err := c.readFrame()
	if err != nil {
		c.t.Fatalf("%s v%d: read reply: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	if got != corr {
		c.t.Fatalf("correlation id %d, want %d", got, corr)
	}
	resp := req.ResponseKind()
	if resp.IsFlexible() && resp.Key() != 18 {
		rd := kbin.Reader{Src: body}
		kmsg.SkipTags(&rd)
		body = rd.Src
	}
	if err := resp.ReadFrom(body); err != nil {
		c.t.Fatalf("%s v%d: decode reply: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp
}

// closedByPeer reports whether the server closed the connection: a read
// ends with EOF (or a reset) rather than a reply or a timeout.
func (c *rawClient) closedByPeer() bool {
	_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	_, err := c.conn.Read(b[:])
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}
