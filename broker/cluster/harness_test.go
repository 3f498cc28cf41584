package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/internal/heldport"
)

// testBroker is one in-process broker: its peer listener (serving only
// the controller operations) outlives the Node so a restart keeps its
// addresses.
type testBroker struct {
	cfg  Config
	node atomic.Pointer[Node]
	mux  atomic.Pointer[peer.Mux]
	srv  *http.Server
}

// testSecret is the cluster secret of every test cluster's brokers.
var testSecret = peer.GenerateSecret()

type testCluster struct {
	t       *testing.T
	mu      sync.Mutex
	brokers map[int]*testBroker
	voters  []Voter
	syncer  context.CancelFunc
}

func raftLogOutput() io.Writer {
	if os.Getenv("KAIRO_TEST_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}

func testLogger() *slog.Logger {
	if os.Getenv("KAIRO_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// newTestCluster prepares (but does not start) voters initial voters.
func newTestCluster(t *testing.T, voters int) *testCluster {
	c := &testCluster{t: t, brokers: map[int]*testBroker{}}
	for id := range voters {
		c.voters = append(c.voters, Voter{ID: id, Address: heldport.Reserve(t)})
	}
	t.Cleanup(c.stopAll)
	return c
}

// config returns the configuration of broker id (a non-voter when it is
// not among the initial voters).
func (c *testCluster) config(id int, rack string) Config {
	raftAddr := heldport.Reserve(c.t)
	for _, v := range c.voters {
		if v.ID == id {
			raftAddr = v.Address
		}
	}
	var join []string
	for _, v := range c.voters {
		if b := c.brokers[v.ID]; b != nil {
			join = append(join, b.cfg.PeerAdvertise)
		}
	}
	return Config{BrokerID: id, DataDir: c.t.TempDir(), RaftListen: raftAddr,
		HTTPAdvertise: fmt.Sprintf("broker-%d.invalid:8080", id), PeerAdvertise: heldport.Reserve(c.t), Peer: peer.NewClient(testSecret),
		Rack: rack, InitialVoters: c.voters, JoinAddresses: join,
		Logger: testLogger(), RaftLogOutput: raftLogOutput(), RaftLogLevel: "warn"}
}

// start starts broker id with cfg, serving its peer listener.
func (c *testCluster) start(cfg Config) *Node {
	c.t.Helper()
	tb := &testBroker{cfg: cfg}
	ln, err := heldport.Listen(cfg.PeerAdvertise)
	if err != nil {
		c.t.Fatal(err)
	}
	if cfg.RaftListener, err = heldport.Listen(cfg.RaftListen); err != nil {
		c.t.Fatal(err)
	}
	tb.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := tb.mux.Load(); m != nil {
			m.ServeHTTP(w, r)
			return
		}
		http.Error(w, `{"error":"starting","code":"NOT_CONTROLLER"}`, http.StatusServiceUnavailable)
	})}
	go tb.srv.Serve(ln)
	n, err := Start(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	m := peer.NewMux(testSecret, testLogger())
	n.ServePeer(m)
	tb.mux.Store(m)
	tb.node.Store(n)
	c.mu.Lock()
	c.brokers[cfg.BrokerID] = tb
	c.mu.Unlock()
	return n
}

// startAll starts every initial voter, with racks in turn from racks.
func (c *testCluster) startAll(racks ...string) {
	for _, v := range c.voters {
		rack := ""
		if len(racks) > 0 {
			rack = racks[v.ID%len(racks)]
		}
		c.start(c.config(v.ID, rack))
	}
	c.waitReady()
}

func (c *testCluster) node(id int) *Node { return c.broker(id).node.Load() }

func (c *testCluster) broker(id int) *testBroker {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.brokers[id]
}

// stop closes broker id's node and HTTP listener, as a process exit would.
func (c *testCluster) stop(id int) {
	tb := c.broker(id)
	tb.mux.Store(nil)
	if n := tb.node.Swap(nil); n != nil {
		start := time.Now()
		n.Close()
		if d := time.Since(start); d > time.Second {
			c.t.Logf("closing broker %d took %v", id, d)
		}
	}
	tb.srv.Close()
}

// crash stops broker id without the graceful controller handover.
func (c *testCluster) crash(id int) {
	tb := c.broker(id)
	tb.mux.Store(nil)
	if n := tb.node.Swap(nil); n != nil {
		n.shutdown(false)
	}
	tb.srv.Close()
}

// restart starts broker id again on its data directory and addresses.
func (c *testCluster) restart(id int) *Node {
	return c.start(c.broker(id).cfg)
}

func (c *testCluster) stopAll() {
	if c.syncer != nil {
		c.syncer()
	}
	c.mu.Lock()
	ids := make([]int, 0, len(c.brokers))
	for id := range c.brokers {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	for _, id := range ids {
		c.stop(id)
	}
}

// running returns the nodes that are up.
func (c *testCluster) running() []*Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Node
	for _, tb := range c.brokers {
		if n := tb.node.Load(); n != nil {
			out = append(out, n)
		}
	}
	return out
}

func (c *testCluster) waitReady() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, n := range c.running() {
		if err := n.WaitReady(ctx); err != nil {
			c.t.Fatalf("broker %d: %v", n.ID(), err)
		}
	}
}

// controller returns the running node that is controller, waiting for one.
func (c *testCluster) controller() *Node {
	c.t.Helper()
	var found *Node
	c.eventually(10*time.Second, "a controller", func() bool {
		for _, n := range c.running() {
			if n.IsController() {
				found = n
				return true
			}
		}
		return false
	})
	return found
}

// otherThan returns a running node that is none of nodes.
func (c *testCluster) otherThan(nodes ...*Node) *Node {
	c.t.Helper()
	for _, o := range c.running() {
		if !slices.Contains(nodes, o) {
			return o
		}
	}
	c.t.Fatalf("no running broker besides %d", len(nodes))
	return nil
}

// eventually polls cond every 20 ms until it holds or timeout passes.
func (c *testCluster) eventually(timeout time.Duration, what string, cond func() bool) time.Duration {
	c.t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			c.t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// syncISRs stands in for the replica layer: every partition leader adds
// its live replicas to the ISR through AlterISR, as if they had caught up
// at once.
func (c *testCluster) syncISRs() {
	ctx, cancel := context.WithCancel(context.Background())
	c.syncer = cancel
	go func() {
		for ctx.Err() == nil {
			for _, n := range c.running() {
				img := n.Image()
				for _, name := range img.TopicNames() {
					for _, p := range img.Topic(name).Partitions {
						if p.Leader != n.ID() {
							continue
						}
						var isr []int
						for _, r := range p.Replicas {
							if p.InISR(r) || img.Live(r) {
								isr = append(isr, r)
							}
						}
						if len(isr) > len(p.ISR) {
							actx, acancel := context.WithTimeout(ctx, 2*time.Second)
							n.AlterISR(actx, metadata.AlterISR{Topic: name, Partition: p.ID, Leader: p.Leader,
								LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: isr})
							acancel()
						}
					}
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func describe(p *metadata.Partition) string {
	return fmt.Sprintf("replicas=%v leader=%d isr=%v epoch=%d", p.Replicas, p.Leader, p.ISR, p.LeaderEpoch)
}

func isErr(err, target error) bool { return err != nil && errorsIs(err, target) }

var errorsIs = errors.Is

func alterReq(leader, leaderEpoch, partitionEpoch int, isr []int) metadata.AlterISR {
	return metadata.AlterISR{Topic: "t", Partition: 0, Leader: leader, LeaderEpoch: leaderEpoch,
		PartitionEpoch: partitionEpoch, ISR: isr}
}
