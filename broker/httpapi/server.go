// Package httpapi is the broker's HTTP+JSON front door (docs/api.md) over
// the broker core (broker/core): routing with Go's method-and-path
// patterns, request decoding and validation, JSON errors with the
// documented status codes, request logs, Prometheus metrics and the
// /health, /ready and /metrics endpoints. It only translates: every request
// is read into the core's request (broker/api), handed to the core, and its
// result or error written back (endpoint.go is that shape, once). The
// original single-node group API is one adapter over the core's group
// requests (seedgroups.go).
//
// Decoding policy: unknown JSON fields are ignored (clients may be newer than
// the broker); a field of the wrong type is 400 INVALID_JSON naming the
// field; a missing required field is 400 MISSING_FIELD; bodies above
// Options.MaxBodyBytes are 413 BODY_TOO_LARGE. A recover middleware turns a
// panic into a JSON 500 and an error log; bad input never gets that far.
package httpapi

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kairolog/kairolog/broker/auth"
	"github.com/kairolog/kairolog/broker/core"
)

// DefaultMaxBodyBytes is max.request.bytes: 16 MiB.
const DefaultMaxBodyBytes = 16 << 20

// DefaultBodyTimeout is client.io.timeout.ms: 30 s.
const DefaultBodyTimeout = 30 * time.Second

// Options configures a Server.
type Options struct {
	Logger *slog.Logger
	// MaxBodyBytes limits request bodies; 0 = DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyTimeout is how long a client may take to send a request's body,
	// and to read a reply (client.io.timeout.ms); 0 = DefaultBodyTimeout.
	BodyTimeout time.Duration
	// Registry receives the HTTP metrics and the broker's collector; nil =
	// a new registry with the Go and process collectors.
	Registry *prometheus.Registry
	// Now is the clock for latencies; nil = time.Now.
	Now func() time.Time
	// Security is the listener's authentication and authorization
	// (security.go); the zero value is an open listener.
	Security auth.Listener
}

// Server is the broker's http.Handler.
type Server struct {
	b       *core.Broker
	opts    Options
	log     *slog.Logger
	mux     *http.ServeMux
	routes  map[string]*route
	metrics *metrics
	panics  prometheus.Counter
	now     func() time.Time
	// passwords remembers the Basic passwords that verified.
	passwords auth.PasswordCache
}

// New builds the handler for b.
func New(b *core.Broker, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.BodyTimeout == 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	if opts.Registry == nil {
		opts.Registry = newRegistry()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{
		b: b, opts: opts, log: opts.Logger, mux: http.NewServeMux(),
		routes: map[string]*route{}, now: opts.Now,
	}
	s.metrics = newMetrics(opts.Registry)
	registerMemoryMetrics(opts.Registry, b.Memory())
	s.panics = s.metrics.panics
	if c := b.Collector(); c != nil {
		opts.Registry.MustRegister(c)
	}
	s.registerRoutes()
	return s
}

type routeKind int

const (
	kindAdmin routeKind = iota
	kindData
	kindQuiet
)

// handle registers a route of the API: it answers from the broker's
// metadata, so it waits for that to catch up first.
func (s *Server) handle(pattern, name string, kind routeKind, h http.HandlerFunc) {
	s.route(pattern, name, kind, h).needsMetadata = true
}

// handleOps registers a route that answers without the metadata: the
// probes (a starting broker must say it is alive and not ready, at once),
// /metrics, and the broker-to-broker paths, over which a starting broker
// registers and catches up.
func (s *Server) handleOps(pattern, name string, kind routeKind, h http.HandlerFunc) {
	s.route(pattern, name, kind, h).open = true
}

func (s *Server) route(pattern, name string, kind routeKind, h http.HandlerFunc) *route {
	rt := &route{
		name:     name,
		dataPath: kind == kindData,
		quiet:    kind == kindQuiet,
		requests: s.metrics.requests.MustCurryWith(prometheus.Labels{"route": name}),
		duration: s.metrics.duration.WithLabelValues(name),
	}
	rt.ok = rt.requests.WithLabelValues("200")
	s.routes[pattern] = rt
	s.mux.Handle(pattern, h)
	return rt
}

func (s *Server) registerRoutes() {
	s.handleOps("GET /health", "health", kindQuiet, s.health)
	s.handleOps("GET /ready", "ready", kindQuiet, s.ready)
	s.handleOps("GET /metrics", "metrics", kindQuiet,
		promhttp.HandlerFor(s.opts.Registry, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}).ServeHTTP)

	s.topicRoutes()
	s.deleteRecordsRoutes()
	s.electLeadersRoutes()
	s.reassignRoutes()
	s.handle("POST /produce", "produce", kindData, s.produce)
	s.producerRoutes()
	s.handle("GET /fetch", "fetch", kindData, s.fetch)
	s.seedGroupRoutes()
	s.groupRoutes()
	s.clusterRoutes()
	s.userRoutes()
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if err := s.b.Ready(); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
