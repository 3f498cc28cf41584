package peer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// StreamServer serves peer streams in front of the peer listener's
// handler: a request to StreamPath with the cluster secret and
// "Upgrade: kairo-peer-stream/1" becomes a stream, whose calls are served
// one by one as the HTTP requests they stand for, through next (the Mux
// and whatever wraps it), concurrently; every other request goes to next
// as it is.
type StreamServer struct {
	secret Secret
	// auth is the Authorization header a call's request carries.
	auth []string
	next http.Handler
	log  *slog.Logger

	// workers serve the calls of every stream.
	workers workers
	// jsonOnly leaves binary bodies out of the streams it accepts, as a
	// broker from before them does.
	jsonOnly bool

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// NewStreamServer serves streams for callers holding secret in front of
// next.
func NewStreamServer(secret Secret, next http.Handler, log *slog.Logger) *StreamServer {
	if log == nil {
		log = slog.Default()
	}
	return &StreamServer{secret: secret, auth: []string{"Bearer " + secret.value}, next: next, log: log, conns: map[net.Conn]struct{}{}}
}

// streamWriteTimeout bounds writing one frame: a peer that stops reading
// loses its stream, not this side's goroutines.
const streamWriteTimeout = 30 * time.Second

// maxCallFrameBytes bounds a call frame: a body of MaxRequestBytes (the
// operation refuses more, as over HTTP) and its header.
const maxCallFrameBytes = MaxRequestBytes + callHeaderBytes + 1<<16

func (s *StreamServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != StreamPath {
		s.next.ServeHTTP(w, r)
		return
	}
	if err := authenticate(s.secret, r); err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="kairolog-peers"`)
		writeError(w, err)
		return
	}
	if !strings.EqualFold(r.Header.Get("Upgrade"), streamProtocol) {
		writeError(w, api.Errorf(api.CodeInvalidArgument, "a peer stream needs Upgrade: %s", streamProtocol))
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		writeError(w, api.Errorf(api.CodeInvalidArgument, "a peer stream needs HTTP/1.1"))
		return
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return
	}
	if !s.track(conn) {
		conn.Close()
		return
	}
	defer s.untrack(conn)
	// The server's header deadline no longer applies; writes get their own.
	_ = conn.SetDeadline(time.Time{})
	accept := "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + streamProtocol + "\r\n"
	if !s.jsonOnly {
		accept += headerStreamBinary + ": 1\r\n"
	}
	if _, err := brw.WriteString(accept + "\r\n"); err != nil {
		return
	}
	if err := brw.Flush(); err != nil {
		return
	}
	s.serve(conn, brw.Reader)
}

// Close ends every stream and refuses new ones; calls being served get
// their context cancelled and their replies go nowhere, as when a
// listener's connections are closed.
func (s *StreamServer) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.workers.stop()
}

func (s *StreamServer) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *StreamServer) untrack(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	c.Close()
}

// serverStream is one stream's state on the serving side.
type serverStream struct {
	conn   net.Conn
	remote string
	out    frameWriter
	mu     sync.Mutex
	calls  map[uint64]context.CancelFunc
}

// serve reads frames until the stream ends, serving each call in its own
// goroutine. The end of the stream cancels the calls still running.
func (s *StreamServer) serve(conn net.Conn, r *bufio.Reader) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &serverStream{conn: conn, remote: conn.RemoteAddr().String(), out: frameWriter{conn: conn},
		calls: map[uint64]context.CancelFunc{}}
	for {
		raw, err := readFrame(r, maxCallFrameBytes)
		if err == nil {
			var c streamCall
			if c, err = decodeCall(raw); err == nil {
				st.take(ctx, s, c)
				continue
			}
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			s.log.Debug("Peer stream ended", "remote", st.remote, "error", err)
		}
		return
	}
}

// take starts a call, or cancels one the caller stopped waiting for.
func (st *serverStream) take(ctx context.Context, s *StreamServer, c streamCall) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if c.kind == frameCancel {
		if cancel := st.calls[c.id]; cancel != nil {
			cancel()
		}
		return
	}
	if _, dup := st.calls[c.id]; dup {
		return // a caller reusing an id in flight: its first call answers
	}
	cctx, cancel := context.WithCancel(ctx)
	st.calls[c.id] = cancel
	s.workers.run(func() { s.dispatch(cctx, st, c) })
}

// dispatch serves one call as the HTTP request it stands for and writes
// its reply.
func (s *StreamServer) dispatch(ctx context.Context, st *serverStream, c streamCall) {
	defer func() {
		st.mu.Lock()
		if cancel := st.calls[c.id]; cancel != nil {
			cancel()
			delete(st.calls, c.id)
		}
		st.mu.Unlock()
	}()
	w := &replyRecorder{header: http.Header{}}
	s.next.ServeHTTP(w, s.request(ctx, st, c))
	header := replyFrame(c.id, w.statusCode(), encodingOf(w.header.Get("Content-Type")), len(w.body)+len(w.tail))
	if err := st.out.writeThen(w.sent, header, w.body, w.tail); err != nil {
		st.conn.Close()
	}
}

// request is the HTTP request a call stands for: the operation's path,
// the headers the HTTP transport would have sent, the caller's address.
func (s *StreamServer) request(ctx context.Context, st *serverStream, c streamCall) *http.Request {
	// The header's values are shared by every call's request: handlers
	// read them, and setting a header replaces its slice.
	h := http.Header{headerAuthorization: s.auth, "Content-Type": contentTypes[c.enc]}
	if c.forwarded {
		h[HeaderForwarded] = forwardedValue
	}
	if c.hasEpoch {
		h[HeaderLeaderEpoch] = []string{strconv.Itoa(int(c.epoch))}
	}
	path := PathPrefix + c.op
	r := &http.Request{Method: http.MethodPost, URL: &url.URL{Path: path}, RequestURI: path,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h,
		Body: &frameBody{Reader: bytes.NewReader(c.body), b: c.body}, ContentLength: int64(len(c.body)), RemoteAddr: st.remote}
	return r.WithContext(ctx)
}

// frameBody is a call's body, read from its frame: Handle takes its bytes
// as they are rather than copying them into a buffer of their own (the
// frame was read into a buffer of its own, which nothing else holds).
type frameBody struct {
	*bytes.Reader
	b []byte
}

func (*frameBody) Close() error { return nil }

// The header values of calls' requests.
var (
	contentTypes   = map[bodyEncoding][]string{encJSON: {jsonType}, encFrame: {frameType}, encBinary: {binaryType}}
	forwardedValue = []string{"1"}
)

// replyRecorder keeps a reply a handler writes, for the reply frame: body,
// and after it tail, the payload of a reply writeResult encoded.
type replyRecorder struct {
	header     http.Header
	status     int
	body, tail []byte
	// sent, when not nil, is called once the reply frame is out: its
	// payload is then no longer read (PayloadReleaser).
	sent func()
}

func (w *replyRecorder) Header() http.Header { return w.header }

func (w *replyRecorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *replyRecorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.tail != nil { // taken before: the bytes go after it
		w.body, w.tail = append(w.body[:len(w.body):len(w.body)], w.tail...), nil
	}
	if w.body == nil {
		// A reply that says its length is kept in one buffer of it.
		if n, err := strconv.Atoi(w.header.Get("Content-Length")); err == nil && n > 0 && n <= MaxReplyBytes {
			w.body = make([]byte, 0, n)
		}
	}
	w.body = append(w.body, p...)
	return len(p), nil
}

// take makes m, which the caller no longer uses, the reply's body
// (writeResult's encoded reply, a replica fetch's batches as its payload):
// a Write would copy it once more.
func (w *replyRecorder) take(m message) {
	if w.body != nil || w.tail != nil {
		_, _ = w.Write(m.bytes())
		return
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body, w.tail = m.head, m.tail
}

func (w *replyRecorder) statusCode() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// maxIdleWorkers bounds the goroutines kept waiting for the next call.
const maxIdleWorkers = 64

// workers runs calls on goroutines kept for the next call, so that the
// stack a handler grows (JSON decoding goes deep) is grown once, not on
// every call, as net/http keeps one goroutine for a connection's requests.
type workers struct {
	mu      sync.Mutex
	idle    []chan func()
	stopped bool
}

// run runs f on an idle worker, or a new one.
func (w *workers) run(f func()) {
	w.mu.Lock()
	if n := len(w.idle); n > 0 {
		next := w.idle[n-1]
		w.idle = w.idle[:n-1]
		w.mu.Unlock()
		next <- f
		return
	}
	w.mu.Unlock()
	go w.work(f)
}

func (w *workers) work(f func()) {
	next := make(chan func(), 1)
	for f != nil {
		f()
		w.mu.Lock()
		if w.stopped || len(w.idle) >= maxIdleWorkers {
			w.mu.Unlock()
			return
		}
		w.idle = append(w.idle, next)
		w.mu.Unlock()
		f = <-next // nil once stopped
	}
}

// stop ends the idle workers; busy ones end after their call.
func (w *workers) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	for _, next := range w.idle {
		close(next)
	}
	w.idle = nil
}
