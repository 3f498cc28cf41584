package peer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The calling side of peer streams: one stream per peer address, dialled
// on the first call and shared by every call to that peer, each waiting
// for the reply with its id. A peer that answers the upgrade with anything
// but 101 (a broker from before streams) is called over HTTP, and asked
// again for a stream after streamRetryAfter.

// streamRetryAfter is how long calls to a peer that refused a stream go
// over HTTP before a stream is asked for again.
const streamRetryAfter = 30 * time.Second

// streamIdleTimeout closes a stream that has carried no call for this
// long, as the HTTP transport closes idle connections.
const streamIdleTimeout = 90 * time.Second

// streamSilenceLimit: a call that waited this long for its reply until its
// deadline, on a stream that brought nothing back meanwhile, leaves the
// peer presumed gone — a host that vanished without closing the
// connection, a process that stopped — and the stream is dropped (Kafka's
// clients close a connection on a request timeout). Without this, the
// calls that follow would wait on the dead stream for their own timeouts
// until TCP keepalive noticed, minutes later; the next call dials again,
// which also finds a peer that came back under the same name at another
// address. A peer that answers anything on the stream is alive and slow,
// and keeps it. Calls with shorter deadlines never drop a stream: they
// may simply have asked for less time than the peer needs.
var streamSilenceLimit = 10 * time.Second

// errPeerSilent breaks a stream whose peer answered nothing for
// streamSilenceLimit while a call waited.
var errPeerSilent = errors.New("peer answered nothing on the stream")

// streams holds a Client's streams.
type streams struct {
	dial func(ctx context.Context, addr string) (net.Conn, error)
	auth string

	mu sync.Mutex
	// byAddr is the stream to each address, or the dial under way.
	byAddr map[string]*clientStream
	// httpUntil: addresses that refused a stream, called over HTTP until then.
	httpUntil map[string]time.Time
}

func newStreams(dial func(ctx context.Context, addr string) (net.Conn, error), secret Secret) *streams {
	return &streams{dial: dial, auth: "Bearer " + secret.value, byAddr: map[string]*clientStream{}, httpUntil: map[string]time.Time{}}
}

// errNotSent: the stream ended (idle, or broken) before the call went
// out on it; the call goes on a new one.
var errNotSent = errors.New("stream ended before the call was sent")

// errStreamRefused: the peer answered the upgrade, not with a stream.
var errStreamRefused = errors.New("peer refused a stream")

// get is the stream to addr, dialling it if there is none; false means
// call over HTTP (the peer refused a stream lately). An error is a peer
// that could not be reached.
func (ss *streams) get(ctx context.Context, addr string) (*clientStream, bool, error) {
	ss.mu.Lock()
	if until, ok := ss.httpUntil[addr]; ok {
		if time.Now().Before(until) {
			ss.mu.Unlock()
			return nil, false, nil
		}
		delete(ss.httpUntil, addr)
	}
	s := ss.byAddr[addr]
	if s == nil {
		s = &clientStream{owner: ss, addr: addr, ready: make(chan struct{}), pending: map[uint64]chan streamReply{}}
		ss.byAddr[addr] = s
		go s.open()
	}
	ss.mu.Unlock()
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	switch {
	case errors.Is(s.dialErr, errStreamRefused):
		return nil, false, nil
	case s.dialErr != nil:
		return nil, false, s.dialErr
	}
	return s, true, nil
}

// forget drops s from the pool once it is broken, so the next call dials
// again; refused marks the address as calling over HTTP for a while.
func (ss *streams) forget(s *clientStream, refused bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byAddr[s.addr] == s {
		delete(ss.byAddr, s.addr)
	}
	if refused {
		ss.httpUntil[s.addr] = time.Now().Add(streamRetryAfter)
	}
}

// closeAll ends every stream; calls waiting on them fail as unreachable.
func (ss *streams) closeAll() {
	ss.mu.Lock()
	all := make([]*clientStream, 0, len(ss.byAddr))
	for _, s := range ss.byAddr {
		all = append(all, s)
	}
	ss.mu.Unlock()
	for _, s := range all {
		go func() {
			<-s.ready // a dial under way ends within its timeout
			s.fail(net.ErrClosed)
		}()
	}
}

// clientStream is one stream to a peer.
type clientStream struct {
	owner *streams
	addr  string
	// ready is closed when the dial ended: conn is set, or dialErr.
	ready   chan struct{}
	conn    net.Conn
	dialErr error
	// binary: the server reads binary bodies (headerStreamBinary).
	binary bool
	out    frameWriter

	// opened is when the dial ended, heard when the last reply arrived,
	// in nanoseconds since opened (monotonic).
	opened time.Time
	heard  atomic.Int64

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]chan streamReply
	broken  error
	idle    *time.Timer
}

// open dials the peer and asks for a stream (an HTTP/1.1 upgrade with the
// cluster secret), then reads replies until the stream breaks.
func (s *clientStream) open() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	conn, r, binary, err := s.upgrade(ctx)
	if err != nil {
		s.dialErr = err
		s.owner.forget(s, errors.Is(err, errStreamRefused))
		close(s.ready)
		return
	}
	s.conn, s.out.conn, s.binary, s.opened = conn, conn, binary, time.Now()
	s.idle = time.AfterFunc(streamIdleTimeout, s.closeIfIdle)
	close(s.ready)
	s.readReplies(r)
}

func (s *clientStream) upgrade(ctx context.Context) (net.Conn, *bufio.Reader, bool, error) {
	conn, err := s.owner.dial(ctx, s.addr)
	if err != nil {
		return nil, nil, false, err
	}
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	}
	req := "POST " + StreamPath + " HTTP/1.1\r\nHost: " + s.addr + "\r\nAuthorization: " + s.owner.auth +
		"\r\nConnection: Upgrade\r\nUpgrade: " + streamProtocol + "\r\nContent-Length: 0\r\n\r\n"
	if _, err := conn.Write([]byte(req)); err != nil {
		conn.Close()
		return nil, nil, false, err
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		conn.Close()
		return nil, nil, false, err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSwitchingProtocols {
		conn.Close()
		return nil, nil, false, fmt.Errorf("%w: %s", errStreamRefused, res.Status)
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, r, res.Header.Get(headerStreamBinary) == "1", nil
}

// readReplies hands each reply to the call waiting for it; a reply for a
// call that stopped waiting is dropped.
func (s *clientStream) readReplies(r *bufio.Reader) {
	for {
		raw, err := readFrameInto(r, MaxReplyBytes+replyHeaderBytes, &replyFrames)
		if err != nil {
			s.fail(err)
			return
		}
		reply, err := decodeReply(raw)
		if err != nil {
			replyFrames.Put(raw)
			s.fail(err)
			return
		}
		reply.frame = raw
		s.heard.Store(int64(time.Since(s.opened)))
		s.mu.Lock()
		ch := s.pending[reply.id]
		delete(s.pending, reply.id)
		s.mu.Unlock()
		if ch != nil {
			ch <- reply
		} else {
			replyFrames.Put(raw) // its call gave up: nothing reads it
		}
	}
}

// fail breaks the stream: every call waiting gets err, and the next call
// to the peer dials a new stream.
func (s *clientStream) fail(err error) {
	if s.conn == nil {
		return
	}
	s.mu.Lock()
	if s.broken != nil {
		s.mu.Unlock()
		return
	}
	s.broken = err
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	s.owner.forget(s, false)
	s.conn.Close()
	s.idle.Stop()
	for _, ch := range pending {
		ch <- streamReply{status: -1}
	}
}

// closeIfIdle closes the stream when no call is waiting on it.
func (s *clientStream) closeIfIdle() {
	s.mu.Lock()
	idle := s.broken == nil && len(s.pending) == 0
	s.mu.Unlock()
	if idle {
		s.fail(errors.New("idle"))
		return
	}
	s.idle.Reset(streamIdleTimeout)
}

// silentSince reports whether the stream has brought nothing back since
// sent, streamSilenceLimit or longer ago.
func (s *clientStream) silentSince(sent time.Duration) bool {
	now := time.Since(s.opened)
	return now-sent >= streamSilenceLimit && time.Duration(s.heard.Load()) < sent
}

// call sends one call and waits for its reply. A stream that broke after
// the call was sent is an *UnreachableError: the call may or may not have
// run; one that ended before is errNotSent. The end of ctx
// tells the peer to cancel the call, and is returned.
func (s *clientStream) call(ctx context.Context, op string, o callOptions, body message) (streamReply, error) {
	ch := make(chan streamReply, 1)
	s.mu.Lock()
	if s.broken != nil {
		s.mu.Unlock()
		return streamReply{}, errNotSent
	}
	s.nextID++
	id := s.nextID
	s.pending[id] = ch
	s.mu.Unlock()
	sent := time.Since(s.opened)
	s.idle.Reset(streamIdleTimeout)

	if err := s.out.write(callFrame(id, op, o, body.enc, body.len()), body.head, body.tail); err != nil {
		s.fail(err)
	}
	select {
	case reply := <-ch:
		if reply.status < 0 {
			s.mu.Lock()
			err := s.broken
			s.mu.Unlock()
			return streamReply{}, &UnreachableError{Addr: s.addr, Err: err}
		}
		return reply, nil
	case <-ctx.Done():
		s.mu.Lock()
		_, waiting := s.pending[id]
		delete(s.pending, id)
		s.mu.Unlock()
		switch {
		case waiting && s.silentSince(sent) && errors.Is(ctx.Err(), context.DeadlineExceeded):
			s.fail(fmt.Errorf("%w for %s", errPeerSilent, time.Since(s.opened)-sent))
		case waiting:
			go func() { _ = s.out.write(cancelFrame(id)) }()
		}
		return streamReply{}, ctx.Err()
	}
}
