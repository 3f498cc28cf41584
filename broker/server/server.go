// Package server is the broker's HTTP API (docs/api.md): routing with Go's
// method-and-path patterns, request decoding and validation, JSON errors with
// the documented status codes, request logs, Prometheus metrics and the
// /health, /ready and /metrics endpoints. It holds no state of its own: every
// request is decoded, checked for shape, and handed to a Broker.
//
// Decoding policy: unknown JSON fields are ignored (clients may be newer than
// the broker); a field of the wrong type is 400 INVALID_JSON naming the
// field; a missing required field is 400 MISSING_FIELD; bodies above
// Options.MaxBodyBytes are 413 BODY_TOO_LARGE. A recover middleware turns a
// panic into a JSON 500 and an error log; bad input never gets that far.
package server

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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
}

// Server is the broker's http.Handler.
type Server struct {
	b       Broker
	opts    Options
	log     *slog.Logger
	mux     *http.ServeMux
	routes  map[string]*route
	metrics *metrics
	panics  prometheus.Counter
	now     func() time.Time
}

// New builds the handler for b.
func New(b Broker, opts Options) *Server {
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
	s.route(pattern, name, kind, h)
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

	s.handle("POST /topics", "create_topic", kindAdmin, s.createTopic)
	s.handle("GET /topics", "list_topics", kindAdmin, s.listTopics)
	s.handle("GET /topics/{name}", "describe_topic", kindAdmin, s.describeTopic)
	s.handle("DELETE /topics/{name}", "delete_topic", kindAdmin, s.deleteTopic)
	s.handle("POST /topics/{name}/partitions", "add_partitions", kindAdmin, s.addPartitions)
	s.handle("PUT /topics/{name}/config", "set_topic_config", kindAdmin, s.putTopicConfig)
	s.handle("PATCH /topics/{name}/config", "patch_topic_config", kindAdmin, s.patchTopicConfig)
	s.handle("POST /topics/{name}/replication-factor", "set_replication_factor", kindAdmin, s.setReplicationFactor)

	s.handle("POST /produce", "produce", kindData, s.produce)
	s.handle("GET /fetch", "fetch", kindData, s.fetch)

	s.handle("POST /offsets/commit", "commit_offset", kindData, s.commitOffset)
	s.handle("GET /offsets", "get_offset", kindData, s.getOffset)
	s.handle("POST /groups/join", "member_join", kindAdmin, s.memberJoin)
	s.handle("POST /groups/leave", "member_leave", kindAdmin, s.memberLeave)
	s.handle("POST /groups/heartbeat", "member_heartbeat", kindData, s.memberHeartbeat)
	s.handle("GET /groups/members", "members", kindAdmin, s.members)
	s.handle("GET /groups/stale", "stale_members", kindAdmin, s.staleMembers)
	s.handle("POST /groups/remove-stale", "remove_stale", kindAdmin, s.removeStale)
	s.handle("POST /groups/assign", "assign", kindAdmin, s.assign)
	s.handle("POST /groups/rebalance", "rebalance", kindAdmin, s.rebalance)
	s.handle("POST /groups/cleanup-and-rebalance", "cleanup_and_rebalance", kindAdmin, s.cleanupAndRebalance)
	s.handle("GET /groups/assignments", "saved_assignments", kindAdmin, s.savedAssignments)
	s.handle("DELETE /groups/assignments", "delete_assignments", kindAdmin, s.deleteAssignments)

	s.handle("GET /groups", "list_groups", kindAdmin, s.listGroups)
	s.handle("GET /groups/{group}", "describe_group", kindAdmin, s.describeGroup)
	s.handle("DELETE /groups/{group}", "delete_group", kindAdmin, s.deleteGroup)
	s.handle("POST /groups/{group}/join", "join_group", kindAdmin, s.joinGroup)
	s.handle("POST /groups/{group}/sync", "sync_group", kindAdmin, s.syncGroup)
	s.handle("POST /groups/{group}/heartbeat", "heartbeat", kindData, s.heartbeat)
	s.handle("POST /groups/{group}/leave", "leave_group", kindAdmin, s.leaveGroup)
	s.handle("POST /groups/{group}/offsets", "commit_offsets", kindData, s.commitOffsets)
	s.handle("GET /groups/{group}/offsets", "group_offsets", kindAdmin, s.groupOffsets)
	s.handle("PUT /groups/{group}/config", "set_group_config", kindAdmin, s.setGroupConfig)
	s.handle("POST /groups/{group}/reset-offsets", "reset_offsets", kindAdmin, s.resetOffsets)

	s.handle("GET /metadata", "metadata", kindAdmin, s.metadata)
	s.handle("GET /brokers", "list_brokers", kindAdmin, s.listBrokers)
	s.handle("GET /brokers/{id}", "describe_broker", kindAdmin, s.describeBroker)
	s.handle("GET /brokers/{id}/safe-to-restart", "safe_to_restart", kindQuiet, s.safeToRestart)
	s.handle("POST /brokers/{id}/drain", "drain_broker", kindAdmin, s.drainBroker)
	s.handle("POST /brokers/{id}/cancel-drain", "cancel_drain", kindAdmin, s.cancelDrain)
	s.handle("DELETE /brokers/{id}", "remove_broker", kindAdmin, s.removeBroker)
	s.handle("POST /brokers/{id}/demote", "demote_voter", kindAdmin, s.demoteVoter)
	s.handle("POST /cluster/rebalance", "rebalance_cluster", kindAdmin, s.rebalanceCluster)
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
