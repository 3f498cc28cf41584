package kafka

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/memory"
)

// request is one decoded request: its header and its body. body is nil
// when the listener does not serve the key or version (unsupportedReply
// answers it).
type request struct {
	key, version  int16
	correlationID int32
	clientID      string
	body          kmsg.Request
	// account holds the frame and what it decoded to in the request memory
	// pool until the request is answered.
	account *memory.Account
}

// errFrame is the error of a frame that closes the connection: a size
// beyond socket.request.max.bytes, a header or body that does not decode.
var errFrame = errors.New("bad request frame")

// minHeaderBytes is the smallest request header: key, version, correlation
// id and a null client id.
const minHeaderBytes = 2 + 2 + 4 + 2

// conn serves one client connection: it reads a frame, decodes it, has
// the core answer it, writes the reply, and only then reads the next
// frame's request into the core, so a connection's requests run in order.
// One frame is read ahead while the previous one runs.
type conn struct {
	s  *Server
	nc net.Conn
	br *bufio.Reader
	// reply is the buffer replies are encoded into, reused across requests.
	reply []byte
}

func (c *conn) serve(ctx context.Context) {
	defer c.nc.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Who the client is comes first: its certificate, then its SASL
	// exchange when the listener asks for one or the client offers one; a
	// client that fails either is disconnected, as Kafka does.
	id, first, ok := c.authenticate(ctx)
	if !ok {
		return
	}
	ctx = withIdentity(ctx, id)
	next := make(chan *request, 1)
	if first != nil {
		next <- first
	}
	go func() {
		defer close(next)
		for {
			req, err := c.readRequest(ctx)
			if err != nil {
				c.logReadError(err)
				cancel()
				return
			}
			select {
			case next <- req:
			case <-ctx.Done():
				req.account.Release()
				return
			}
		}
	}()
	for req := range next {
		if err := c.answer(ctx, req); err != nil {
			c.s.log.Debug("Kafka connection closed while answering", "remote", c.nc.RemoteAddr().String(),
				"api", kmsg.NameForKey(req.key), "error", err)
			cancel()
			// Close so that the reader, blocked in a read, returns.
			c.nc.Close()
		}
	}
}

func (c *conn) logReadError(err error) {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed), errors.Is(err, context.Canceled):
	case errors.Is(err, errSASL):
		c.s.log.Info("Closing a Kafka connection that did not authenticate", "remote", c.nc.RemoteAddr().String(), "error", err)
	case errors.Is(err, errFrame), errors.Is(err, memory.ErrNeverFits):
		c.s.log.Warn("Closing a Kafka connection", "remote", c.nc.RemoteAddr().String(), "error", err)
	default:
		c.s.log.Debug("Kafka connection ended", "remote", c.nc.RemoteAddr().String(), "error", err)
	}
}

// readRequest reads and decodes the next frame. The size comes first; a
// size beyond socket.request.max.bytes ends the connection before its body
// is read, and the frame is charged to the request pool (waiting while it
// does not fit) before its bytes are.
func (c *conn) readRequest(ctx context.Context) (*request, error) {
	// Between requests a connection may idle up to connections.max.idle.ms;
	// once a frame has begun, its bytes must arrive within the I/O timeout.
	_ = c.nc.SetReadDeadline(time.Now().Add(c.s.opts.IdleTimeout))
	var sizeBuf [4]byte
	if _, err := io.ReadFull(c.br, sizeBuf[:]); err != nil {
		return nil, err
	}
	size := int32(binary.BigEndian.Uint32(sizeBuf[:]))
	if size < minHeaderBytes || size > c.s.opts.MaxRequestBytes {
		return nil, fmt.Errorf("%w: size %d, socket.request.max.bytes is %d", errFrame, size, c.s.opts.MaxRequestBytes)
	}
	acct := memory.NewAccount(int64(size) <= memory.SmallRequestBytes)
	if err := acct.ChargeWait(ctx, c.s.opts.Memory, int64(size)); err != nil {
		return nil, err
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(c.s.opts.IOTimeout))
	frame := make([]byte, size)
	if _, err := io.ReadFull(c.br, frame); err != nil {
		acct.Release()
		return nil, err
	}
	req, err := c.decode(ctx, frame, acct)
	if err != nil {
		acct.Release()
		return nil, err
	}
	return req, nil
}

// decode parses a frame's header and, when the listener serves its key and
// version, its body.
func (c *conn) decode(ctx context.Context, frame []byte, acct *memory.Account) (*request, error) {
	rd := kbin.Reader{Src: frame}
	req := &request{key: rd.Int16(), version: rd.Int16(), correlationID: rd.Int32(), account: acct}
	if id := rd.NullableString(); id != nil {
		req.clientID = *id
	}
	if err := rd.Complete(); err != nil {
		return nil, fmt.Errorf("%w: header: %v", errFrame, err)
	}
	if _, ok := serves(req.key, req.version); !ok {
		return req, nil
	}
	body := kmsg.RequestForKey(req.key)
	body.SetVersion(req.version)
	if body.IsFlexible() {
		kmsg.SkipTags(&rd)
		if err := rd.Complete(); err != nil {
			return nil, fmt.Errorf("%w: header tags: %v", errFrame, err)
		}
	}
	charge := decodeCharge(req.key, len(rd.Src))
	if req.key == 0 {
		charge = produceCharge(req.version, rd.Src)
	}
	if err := acct.ChargeWait(ctx, c.s.opts.Memory, charge); err != nil {
		return nil, err
	}
	if err := body.ReadFrom(rd.Src); err != nil {
		return nil, fmt.Errorf("%w: %s v%d: %v", errFrame, kmsg.NameForKey(req.key), req.version, err)
	}
	req.body = body
	return req, nil
}

// answer runs req and writes its reply, if it has one. The request's
// memory goes back once the reply is encoded.
func (c *conn) answer(ctx context.Context, req *request) error {
	defer req.account.Release()
	var resp kmsg.Response
	if a, ok := serves(req.key, req.version); ok && req.body != nil {
		ctx = memory.WithAccount(ctx, req.account)
		if c.s.opts.RequestContext != nil {
			ctx = c.s.opts.RequestContext(ctx)
		}
		resp = a.handle(c.s, ctx, req)
	} else {
		resp = unsupportedReply()
	}
	if resp == nil {
		return nil
	}
	return c.write(req, resp)
}

// write sends resp as the reply to req, giving req's memory back once the
// reply is encoded.
func (c *conn) write(req *request, resp kmsg.Response) error {
	c.reply = appendReply(c.reply[:0], req.correlationID, resp)
	req.account.Release()
	return c.writeBytes(c.reply)
}

// writeBytes writes b within the I/O timeout.
func (c *conn) writeBytes(b []byte) error {
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.opts.IOTimeout))
	_, err := c.nc.Write(b)
	if cap(c.reply) > maxKeptReplyBuffer {
		c.reply = nil
	}
	return err
}

// maxKeptReplyBuffer is the largest reply buffer a connection keeps for
// the next reply; a larger one (a big fetch) is left to the collector.
const maxKeptReplyBuffer = 1 << 20

// appendReply frames resp: size, correlation id, the reply header's tags in
// flexible versions (never for ApiVersions, whose reply header is v0 in
// every version so that any client can read it), then the body.
func appendReply(dst []byte, correlationID int32, resp kmsg.Response) []byte {
	dst = append(dst, 0, 0, 0, 0)
	dst = kbin.AppendInt32(dst, correlationID)
	if resp.IsFlexible() && resp.Key() != 18 {
		dst = append(dst, 0)
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst, uint32(len(dst)-4))
	return dst
}
