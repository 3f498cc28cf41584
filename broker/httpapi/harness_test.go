package httpapi_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/auth"
	"github.com/kairolog/kairolog/broker/cluster"
	"github.com/kairolog/kairolog/broker/config"
	"github.com/kairolog/kairolog/broker/core"
	"github.com/kairolog/kairolog/broker/httpapi"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/internal/heldport"
)

// clock is a test clock for group membership: real time plus an offset the
// test advances, so a 35 s stale wait takes no time.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

// node is one in-process broker behind a real client listener and a real
// peer listener.
type node struct {
	t        testing.TB
	requests *requestCounter // on both listeners, by path
	b        *core.Broker
	srv      *httptest.Server
	peerSrv  *httptest.Server
	url      string
	cancel   context.CancelFunc
	runDone  chan struct{}
	cfg      config.Config
	ln       string
	public   *httpapi.Server
	// client sends the requests of do (nil: httpClient).
	client *http.Client
}

type nodeOptions struct {
	dataDir  string
	id       int32
	voters   []cluster.Voter
	raft     string // raft listen address
	http     string // HTTP listen address ("" = a free port)
	peer     string // peer listen address ("" = a free port)
	clock    *clock
	settings *config.Settings
	// bootstrap are the peer addresses a broker that is not an initial
	// voter registers through.
	bootstrap []string
	// tls serves the client listener over TLS (client is then the
	// client that trusts it); security is its authentication and
	// authorization.
	tls      *tls.Config
	client   *http.Client
	security auth.Listener
}

// testSecret is the cluster secret of the test brokers.
var testSecret = peer.GenerateSecret()

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))
}

// startNode starts a broker and its HTTP server; it does not wait for ready.
func startNode(t testing.TB, o nodeOptions) *node {
	t.Helper()
	if o.dataDir == "" {
		o.dataDir = t.TempDir()
	}
	if o.raft == "" {
		o.raft = heldport.Reserve(t)
	}
	if o.http == "" {
		o.http = heldport.Reserve(t)
	}
	if o.peer == "" {
		o.peer = heldport.Reserve(t)
	}
	ln, err := heldport.Listen(o.http)
	if err != nil {
		t.Fatal(err)
	}
	peerLn, err := heldport.Listen(o.peer)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	raftLn, err := heldport.Listen(o.raft)
	if err != nil {
		ln.Close()
		peerLn.Close()
		t.Fatal(err)
	}
	s := testSettings()
	if o.settings != nil {
		s = *o.settings
	}
	cfg := config.Config{ID: o.id, DataDir: o.dataDir, HTTPAdvertise: ln.Addr().String(), RaftListen: o.raft, RaftListener: raftLn,
		PeerAdvertise: peerLn.Addr().String(), PeerSecret: testSecret,
		InitialVoters: o.voters, BootstrapServers: o.bootstrap, Settings: s, Logger: quietLogger(), RaftLogOutput: io.Discard, RaftLogLevel: "off"}
	if o.clock != nil {
		cfg.Now = o.clock.Now
	}
	b, err := core.New(cfg)
	if err != nil {
		ln.Close() // broker.New closed raftLn
		peerLn.Close()
		t.Fatal(err)
	}
	public := httpapi.New(b, httpapi.Options{Logger: quietLogger(), MaxBodyBytes: s.MaxRequestBytes, BodyTimeout: s.ClientIOTimeout,
		Security: o.security})
	counter := &requestCounter{next: public}
	var srv *httptest.Server
	if o.tls != nil {
		srv = serveTLSOn(ln, counter, o.tls)
	} else {
		srv = serveOn(ln, counter)
	}
	peerSrv := serveOn(peerLn, b.PeerHandler(func(h http.Handler) http.Handler {
		return &requestCounter{next: h, state: counter.shared()}
	}))
	ctx, cancel := context.WithCancel(context.Background())
	n := &node{t: t, requests: counter, b: b, srv: srv, peerSrv: peerSrv, url: srv.URL, cancel: cancel, runDone: make(chan struct{}),
		cfg: cfg, ln: ln.Addr().String(), public: public, client: o.client}
	go func() { _ = b.Run(ctx); close(n.runDone) }()
	t.Cleanup(n.stop)
	return n
}

// serveOn serves h on a listener the test holds.
func serveOn(ln net.Listener, h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	return srv
}

// serveTLSOn serves h over TLS on a listener the test holds.
func serveTLSOn(ln net.Listener, h http.Handler, conf *tls.Config) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.TLS = conf
	srv.StartTLS()
	return srv
}

// requestCounter counts the requests a broker receives, by path, and can
// slow down the answers of a path, as an overloaded broker would. The
// client and the peer listener's counters share one state.
type requestCounter struct {
	next  http.Handler
	state *pathState
}

type pathState struct {
	mu    sync.Mutex
	paths map[string]int
	slow  map[string]*slowPath
}

// slowPath delays the requests of one path.
type slowPath struct {
	delay time.Duration
	seen  chan struct{} // receives as each request arrives (never blocks)
}

func (c *requestCounter) shared() *pathState {
	if c.state == nil {
		c.state = &pathState{paths: map[string]int{}, slow: map[string]*slowPath{}}
	}
	return c.state
}

func (c *requestCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st := c.shared()
	st.mu.Lock()
	st.paths[r.URL.Path]++
	sp := st.slow[r.URL.Path]
	st.mu.Unlock()
	if sp != nil {
		select {
		case sp.seen <- struct{}{}:
		default:
		}
		select {
		case <-time.After(sp.delay):
		case <-r.Context().Done():
			return
		}
	}
	c.next.ServeHTTP(w, r)
}

// slowDown makes every later request for path wait delay before it is
// served; seen receives as each one arrives.
func (c *requestCounter) slowDown(path string, delay time.Duration) (seen <-chan struct{}) {
	sp := &slowPath{delay: delay, seen: make(chan struct{}, 1024)}
	st := c.shared()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.slow[path] = sp
	return sp.seen
}

func (c *requestCounter) count(path string) int {
	st := c.shared()
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.paths[path]
}

// stop shuts the broker down gracefully (idempotent).
func (n *node) stop() {
	if n.cancel == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = n.b.ControlledShutdown(ctx)
	n.srv.Close()
	n.peerSrv.Close()
	n.cancel()
	_ = n.b.Close()
	<-n.runDone
	n.cancel = nil
}

// crash stops the broker without a controlled shutdown: its HTTP
// connections are cut and it stops heartbeating, so the controller fences
// it after the session timeout. (The logs still close cleanly; the
// process-level fault test in test/fault kills real processes.)
func (n *node) crash() {
	if n.cancel == nil {
		return
	}
	n.srv.CloseClientConnections()
	n.srv.Close()
	n.peerSrv.CloseClientConnections()
	n.b.ClosePeerStreams()
	n.peerSrv.Close()
	n.cancel()
	_ = n.b.Close()
	<-n.runDone
	n.cancel = nil
}

func (n *node) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, _ := n.do(t, "GET", "/ready", "")
		if st == 200 {
			return
		}
		if time.Now().After(deadline) {
			_, body := n.do(t, "GET", "/ready", "")
			t.Fatalf("broker %d not ready: %s", n.cfg.ID, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startSingle is a ready one-voter broker.
func startSingle(t testing.TB, o nodeOptions) *node {
	n := startNode(t, o)
	n.waitReady(t)
	return n
}

var httpClient = &http.Client{Timeout: 60 * time.Second}

// do sends a request and returns the status and body.
func (n *node) do(t testing.TB, method, path, body string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, n.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	c := httpClient
	if n.client != nil {
		c = n.client
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// expect sends a request, checks the status, and decodes the reply.
func (n *node) expect(t testing.TB, method, path, body string, status int) map[string]any {
	t.Helper()
	st, b := n.do(t, method, path, body)
	if st != status {
		t.Fatalf("%s %s %s: status %d, want %d: %s", method, path, body, st, status, b)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(b), &m); err != nil {
		t.Fatalf("%s %s: reply is not a JSON object: %q", method, path, b)
	}
	return m
}

// sameJSON compares got with the JSON want after normalising both.
func sameJSON(t testing.TB, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation %q: %v", want, err)
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Fatalf("%s:\n got  %s\n want %s", what, gb, wb)
	}
}

// subset checks that every field of want is in got with the same value.
func subset(t testing.TB, what string, got map[string]any, want string) {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation %q: %v", want, err)
	}
	for k, v := range w {
		gb, _ := json.Marshal(got[k])
		wb, _ := json.Marshal(v)
		if !bytes.Equal(gb, wb) {
			t.Fatalf("%s: field %q = %s, want %s (reply %v)", what, k, gb, wb, got)
		}
	}
}

// ids strips last_seen from a members array, for the seed's id-only shapes.
func ids(v any) []map[string]any {
	var out []map[string]any
	for _, m := range v.([]any) {
		out = append(out, map[string]any{"id": m.(map[string]any)["id"]})
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// testSettings are the settings startNode uses by default.
func testSettings() config.Settings {
	s := config.DefaultSettings()
	s.OffsetsTopicNumPartitions = 3
	s.BrokerSessionTimeout = 2 * time.Second
	return s
}

// noCleanupT lets a broker outlive the test that started it (the fuzz
// target shares one broker across inputs).
type noCleanupT struct{ *testing.T }

func (noCleanupT) Cleanup(func()) {}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// checkErrorBody checks an error reply is {"error": "...", "code": "..."}.
func checkErrorBody(t testing.TB, resp *http.Response) {
	t.Helper()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s %s: error reply is not JSON: %v", resp.Request.Method, resp.Request.URL, err)
	}
	if msg, _ := body["error"].(string); msg == "" {
		t.Fatalf("%s %s: error reply without a message: %v", resp.Request.Method, resp.Request.URL, body)
	}
	if code, _ := body["code"].(string); code == "" || code == "INTERNAL" {
		t.Fatalf("%s %s: error reply code %v", resp.Request.Method, resp.Request.URL, body)
	}
}

// kafkaPartition is Kafka's default partitioner, computed independently of
// the broker: toPositive(murmur2(key)) % n.
func kafkaPartition(key string, n int32) int32 {
	data := []byte(key)
	const m = 0x5bd1e995
	h := uint32(0x9747b28c) ^ uint32(len(data))
	for len(data) >= 4 {
		k := uint32(data[0]) | uint32(data[1])<<8 | uint32(data[2])<<16 | uint32(data[3])<<24
		k *= m
		k ^= k >> 24
		k *= m
		h = h*m ^ k
		data = data[4:]
	}
	switch len(data) {
	case 3:
		h ^= uint32(data[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h&0x7fffffff) % n
}
