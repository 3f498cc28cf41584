package httpapi

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// statusRecorder remembers what a handler answered, for logs and metrics,
// and puts a deadline on writing the reply.
type statusRecorder struct {
	http.ResponseWriter
	status int
	code   string
	bytes  int
	// writeTimeout bounds how long the reply may take to write, from its
	// first byte: a client that does not read its reply cannot hold the
	// connection, and the reply's memory, for longer.
	writeTimeout time.Duration
	// bodyDeadline is the read deadline of a body not yet read to its end
	// (limitBody). Before the first byte of a reply net/http reads what the
	// handler left of the body, up to that deadline, so the reply's own
	// deadline counts from there.
	bodyDeadline time.Time
}

func (r *statusRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.begin(status)
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) begin(status int) {
	r.status = status
	if r.writeTimeout > 0 {
		from := time.Now()
		if r.bodyDeadline.After(from) {
			from = r.bodyDeadline
		}
		_ = http.NewResponseController(r.ResponseWriter).SetWriteDeadline(from.Add(r.writeTimeout))
	}
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.begin(http.StatusOK)
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := r.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("hijack not supported")
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// ServeHTTP is the middleware chain: recover, body limit and deadline,
// routing (with JSON 404/405), the request's memory account, the wait for
// the broker's metadata, authentication (security.go), then metrics and the
// request log.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := s.now()
	rec := &statusRecorder{ResponseWriter: w, writeTimeout: s.opts.BodyTimeout}
	// Handler finds the route for metrics; ServeHTTP below matches again
	// because only it sets the request's path values.
	h, pattern := s.mux.Handler(r)
	route := s.routes[pattern]
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.panics.Inc()
			s.log.Error("Handler panicked", "method", r.Method, "path", r.URL.Path,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if rec.status == 0 {
				writeJSON(rec, http.StatusInternalServerError,
					api.Errorf(api.CodeInternal, "internal error").Body())
				rec.code = api.CodeInternal
			}
		}
		s.observe(r, route, rec, s.now().Sub(start))
	}()
	if r.Body != nil && s.opts.MaxBodyBytes > 0 {
		r.Body = http.MaxBytesReader(rec, r.Body, s.opts.MaxBodyBytes)
	}
	s.limitBody(rec, r, start)
	if pattern == "" {
		s.unrouted(rec, r, h)
		return
	}
	if route.needsMetadata {
		var release func()
		r, release = withAccount(r)
		defer release()
		if err := s.b.AwaitMetadata(r.Context()); err != nil {
			s.writeError(rec, r, err)
			return
		}
	}
	// After the metadata: the users are in it.
	if !route.open && !s.opts.Security.Open() {
		var err error
		if r, err = s.authenticate(rec, r); err != nil {
			s.writeError(rec, r, err)
			return
		}
	}
	s.mux.ServeHTTP(rec, r)
}

// unrouted turns the mux's plain-text 404 and 405 into JSON errors, keeping
// the Allow header the mux computed.
func (s *Server) unrouted(w http.ResponseWriter, r *http.Request, h http.Handler) {
	probe := &headerProbe{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if allow := probe.header.Get("Allow"); allow != "" {
		w.Header().Set("Allow", allow)
	}
	switch probe.status {
	case http.StatusMethodNotAllowed:
		s.fail(w, r, api.CodeMethodNotAllowed, "method %s is not allowed on %s", r.Method, r.URL.Path)
	case http.StatusMovedPermanently, http.StatusPermanentRedirect, http.StatusTemporaryRedirect:
		s.fail(w, r, api.CodeNotFound, "no such endpoint: %s (try %s)", r.URL.Path, probe.header.Get("Location"))
	default:
		s.fail(w, r, api.CodeNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path)
	}
}

// headerProbe captures what the mux's fallback handler would answer.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header { return p.header }
func (p *headerProbe) WriteHeader(s int) {
	if p.status == 0 {
		p.status = s
	}
}
func (p *headerProbe) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}

// observe records metrics and the request log line. The data path (produce,
// fetch) logs at debug level unless it failed: at thousands of requests per
// second an info line each would cost more than the request.
func (s *Server) observe(r *http.Request, rt *route, rec *statusRecorder, d time.Duration) {
	name := "unrouted"
	dataPath := false
	if rt != nil {
		name = rt.name
		dataPath = rt.dataPath
		rt.observe(rec.status, d)
	} else {
		s.metrics.unrouted.Inc()
	}
	s.metrics.bytesOut.Add(float64(rec.bytes))
	if rec.code == api.CodeBrokerBusy {
		// A flood is refused by the thousand: one line each would let it
		// fill the disk too. kairo_memory_pool_refused_total counts them.
		if s.log.Enabled(r.Context(), slog.LevelDebug) {
			s.log.Debug("Request refused", "method", r.Method, "path", r.URL.Path, "route", name,
				"status", rec.status, "code", rec.code, "duration", d, "remote", r.RemoteAddr)
		}
		return
	}
	if rec.status >= 500 {
		s.log.Warn("Request failed", "method", r.Method, "path", r.URL.Path, "route", name,
			"status", rec.status, "code", rec.code, "duration", d, "remote", r.RemoteAddr)
		return
	}
	if dataPath && rec.status < 400 {
		// Data-path requests are too many to log at info. The level is
		// checked first: building the arguments allocates on every request.
		if s.log.Enabled(r.Context(), slog.LevelDebug) {
			s.log.Debug("Request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "duration", d)
		}
		return
	}
	if rt != nil && rt.quiet && rec.status < 400 {
		return
	}
	s.log.Info("Request", "method", r.Method, "path", r.URL.Path, "route", name,
		"status", rec.status, "code", rec.code, "duration", d, "remote", r.RemoteAddr)
}
