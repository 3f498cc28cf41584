package replica

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/storage"
)

// memCluster is an in-memory metadata source and controller: tests change
// partition states by hand, and it validates and commits AlterISR as the
// controller would (leader epoch and partition epoch must match).
type memCluster struct {
	mu       sync.Mutex
	parts    map[partitionKey]PartitionState
	addrs    map[int32]string
	subs     map[int]chan struct{}
	nextSub  int
	caughtUp bool
	alters   atomic.Int64
	quiet    bool // see hold
	// index counts the changes delivered to the brokers, as the index of
	// a metadata image does; leaseLost takes the metadata lease away.
	index     uint64
	leaseLost bool
}

func newMemCluster() *memCluster {
	return &memCluster{
		parts: map[partitionKey]PartitionState{}, addrs: map[int32]string{},
		subs: map[int]chan struct{}{}, caughtUp: true,
	}
}

func (c *memCluster) Partitions() ([]PartitionState, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]PartitionState, 0, len(c.parts))
	for _, st := range c.parts {
		out = append(out, clonePartitionState(st))
	}
	return out, c.index, c.caughtUp
}

// Lease holds unless a test took it away (leaseLost).
func (c *memCluster) Lease() (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.index, !c.leaseLost
}

func (c *memCluster) BrokerAddress(id int32) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.addrs[id]
	return a, ok
}

func (c *memCluster) Subscribe() (<-chan struct{}, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan struct{}, 1)
	id := c.nextSub
	c.nextSub++
	c.subs[id] = ch
	return ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.subs, id)
	}
}

func (c *memCluster) notifyLocked() {
	if c.quiet {
		return
	}
	c.index++
	for _, ch := range c.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (c *memCluster) AlterISR(ctx context.Context, req AlterISRRequest) (PartitionState, error) {
	c.alters.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	key := partitionKey{req.Topic, req.Partition}
	st, ok := c.parts[key]
	switch {
	case !ok:
		return PartitionState{}, ErrUnknownPartition
	case req.LeaderID != st.Leader || req.LeaderEpoch != st.LeaderEpoch:
		return PartitionState{}, fmt.Errorf("alter ISR: %w", ErrFencedLeaderEpoch)
	case req.PartitionEpoch != st.PartitionEpoch:
		return PartitionState{}, fmt.Errorf("alter ISR: %w: %d, current %d", metadata.ErrStalePartitionEpoch, req.PartitionEpoch, st.PartitionEpoch)
	}
	st.ISR = slices.Clone(req.ISR)
	st.PartitionEpoch++
	c.parts[key] = st
	c.notifyLocked()
	return clonePartitionState(st), nil
}

// hold stops (true) or resumes (false) telling subscribers about changes:
// the metadata of a committed change is then late to reach the brokers.
// Resuming tells them at once.
func (c *memCluster) hold(quiet bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.quiet = quiet
	if !quiet {
		c.notifyLocked()
	}
}

// set installs a partition state as the controller would publish it.
func (c *memCluster) set(st PartitionState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.parts[partitionKey{st.Topic, st.Partition}] = clonePartitionState(st)
	c.notifyLocked()
}

// update changes a partition and bumps its partition epoch (and its leader
// epoch if the leader changed).
func (c *memCluster) update(topic string, partition int32, f func(*PartitionState)) PartitionState {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := partitionKey{topic, partition}
	st := clonePartitionState(c.parts[key])
	leader := st.Leader
	f(&st)
	if st.Leader != leader {
		st.LeaderEpoch++
	}
	st.PartitionEpoch++
	c.parts[key] = st
	c.notifyLocked()
	return clonePartitionState(st)
}

func (c *memCluster) state(topic string, partition int32) PartitionState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return clonePartitionState(c.parts[partitionKey{topic, partition}])
}

func (c *memCluster) remove(topic string, partition int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.parts, partitionKey{topic, partition})
	c.notifyLocked()
}

// testBroker is one Manager behind a real HTTP server on 127.0.0.1. The
// server outlives the manager so a broker can be stopped and restarted on
// the same address and data directory.
type testBroker struct {
	id      int32
	dir     string
	cluster *memCluster
	cfg     func(*Config)
	srv     *httptest.Server
	mu      sync.Mutex
	m       *Manager
	mux     *peer.Mux // m's peer operations
	// sessionRequests are the fetch session requests the broker received,
	// as sent.
	sessionRequests []sessionRequest
}

func (b *testBroker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	m, mux := b.m, b.mux
	b.mu.Unlock()
	if m == nil {
		http.Error(w, `{"error":"broker down","code":"NOT_READY"}`, http.StatusServiceUnavailable)
		return
	}
	if r.URL.Path == peer.PathPrefix+opFetchSession.Name() {
		body, _ := io.ReadAll(r.Body)
		var req sessionRequest
		if json.Unmarshal(body, &req) == nil {
			b.mu.Lock()
			b.sessionRequests = append(b.sessionRequests, req)
			b.mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	mux.ServeHTTP(w, r)
}

// takeSessionRequests returns the fetch session requests received since
// the last call.
func (b *testBroker) takeSessionRequests() []sessionRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.sessionRequests
	b.sessionRequests = nil
	return out
}

func (b *testBroker) manager() *Manager {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m
}

func (b *testBroker) start(t testing.TB) {
	t.Helper()
	cfg := Config{
		BrokerID: b.id, DataDir: b.dir, Metadata: b.cluster, ISR: b.cluster, Peer: testPeer,
		FetchWait: 200 * time.Millisecond,
		Logger:    testLogger(t),
	}
	if b.cfg != nil {
		b.cfg(&cfg)
	}
	m, err := NewManager(cfg)
	if err != nil {
		t.Fatalf("broker %d: %v", b.id, err)
	}
	mux := peer.NewMux(testSecret, testLogger(t))
	m.ServePeer(mux)
	b.mu.Lock()
	b.m, b.mux = m, mux
	b.mu.Unlock()
}

// stop closes the manager; the broker answers 503 until started again.
func (b *testBroker) stop(t testing.TB) {
	t.Helper()
	b.mu.Lock()
	m := b.m
	b.m = nil
	b.mu.Unlock()
	if m != nil {
		if err := m.Close(); err != nil {
			t.Errorf("broker %d close: %v", b.id, err)
		}
	}
}

// testSecret is the cluster secret of the test brokers, and testPeer the
// client they call each other with.
var (
	testSecret = peer.GenerateSecret()
	testPeer   = peer.NewClient(testSecret)
)

func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("REPLICA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startBrokers starts n brokers with ids 0..n-1 whose addresses are
// registered in c; cfg may change their config, metadata source included.
func startBrokers(t testing.TB, c *memCluster, n int, cfg func(*Config)) []*testBroker {
	t.Helper()
	bs := make([]*testBroker, n)
	for i := range bs {
		b := &testBroker{id: int32(i), dir: t.TempDir(), cluster: c, cfg: cfg}
		b.srv = httptest.NewServer(b)
		c.mu.Lock()
		c.addrs[b.id] = b.srv.Listener.Addr().String()
		c.mu.Unlock()
		bs[i] = b
	}
	for _, b := range bs {
		b.start(t)
	}
	t.Cleanup(func() {
		for _, b := range bs {
			b.stop(t)
			b.srv.Close()
		}
	})
	return bs
}

// threeReplicas publishes topic-0 on brokers 0,1,2 led by 0 in epoch 1.
func threeReplicas(c *memCluster, topic string, config map[string]string) {
	c.set(PartitionState{
		Topic: topic, Partition: 0, Replicas: []int32{0, 1, 2}, Leader: 0,
		LeaderEpoch: 1, ISR: []int32{0, 1, 2}, PartitionEpoch: 1, Config: config,
	})
}

func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func info(t testing.TB, b *testBroker, topic string) PartitionInfo {
	t.Helper()
	i, err := b.manager().PartitionInfo(topic, 0)
	if err != nil {
		t.Fatalf("broker %d: PartitionInfo: %v", b.id, err)
	}
	return i
}

// waitLeader waits until broker b leads topic-0.
func waitLeader(t testing.TB, b *testBroker, topic string) {
	t.Helper()
	eventually(t, 5*time.Second, fmt.Sprintf("broker %d to lead %s", b.id, topic), func() bool {
		i, err := b.manager().PartitionInfo(topic, 0)
		return err == nil && i.IsLeader
	})
}

func recordsOf(prefix string, n int) []storage.Record {
	rs := make([]storage.Record, n)
	for i := range rs {
		rs[i] = storage.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}
	}
	return rs
}

func produce(t testing.TB, b *testBroker, topic string, recs []storage.Record, acks Acks) (int64, int64) {
	t.Helper()
	base, last, err := b.manager().Produce(context.Background(), topic, 0, recs, acks, 5*time.Second)
	if err != nil {
		t.Fatalf("produce to broker %d: %v", b.id, err)
	}
	return base, last
}

// segmentBytes concatenates a partition's .log files in offset order: the
// bytes on disk that replicas must agree on.
func segmentBytes(t testing.TB, b *testBroker, topic string) []byte {
	t.Helper()
	dir := filepath.Join(b.dir, partitionDir(topic, 0))
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(data)
	}
	return buf.Bytes()
}

// values returns the record values as strings.
func values(recs []storage.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Value)
	}
	return out
}

// readAll reads every record of a replica's log from the storage layer,
// ignoring the high watermark.
func readAll(t testing.TB, b *testBroker, topic string) []storage.Record {
	t.Helper()
	p, err := b.manager().partition(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []storage.Record
	for off := p.log.LogStartOffset(); off < p.log.LogEndOffset(); {
		recs, err := p.log.Read(off, p.log.LogEndOffset(), 1<<20, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			break
		}
		out = append(out, recs...)
		off = recs[len(recs)-1].Offset + 1
	}
	return out
}
