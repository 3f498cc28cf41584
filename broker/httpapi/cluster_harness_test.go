package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster"
	"github.com/kairolog/kairolog/broker/config"
	"github.com/kairolog/kairolog/internal/heldport"
)

// testCluster is a cluster of in-process brokers whose addresses and data
// directories stay the same across crashes and restarts.
type testCluster struct {
	t         *testing.T
	nodes     []*node // nil while a broker is down
	voters    []cluster.Voter
	rafts     []string
	https     []string
	peers     []string
	dirs      []string
	bootstrap []string
	settings  config.Settings
}

// skipClusterWhenShort leaves the tests that start several brokers out of
// go test -short (make test-unit): they run the whole broker end to end,
// through elections and timeouts, and take most of this package's time.
// make test runs them.
func skipClusterWhenShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a cluster of brokers; skipped with -short")
	}
}

// newTestCluster starts n brokers, the first voters of which form the
// metadata quorum and the rest join as non-voters, and waits until every
// one is ready.
func newTestCluster(t *testing.T, n, voters int, change func(*config.Settings)) *testCluster {
	t.Helper()
	skipClusterWhenShort(t)
	c := &testCluster{t: t, nodes: make([]*node, n), settings: testSettings()}
	if change != nil {
		change(&c.settings)
	}
	for i := range n {
		c.rafts = append(c.rafts, heldport.Reserve(t))
		c.https = append(c.https, heldport.Reserve(t))
		c.peers = append(c.peers, heldport.Reserve(t))
		c.dirs = append(c.dirs, t.TempDir())
		if i < voters {
			c.voters = append(c.voters, cluster.Voter{ID: i, Address: c.rafts[i]})
			c.bootstrap = append(c.bootstrap, c.peers[i])
		}
	}
	for i := range n {
		c.start(i)
	}
	for i := range n {
		c.nodes[i].waitReady(t)
	}
	// __consumer_offsets starts on the brokers registered first and grows
	// to its replication factor as the others join; placement counts its
	// preferred leaders, so wait for that before the test places topics.
	eventually(t, 20*time.Second, "__consumer_offsets to reach its replication factor", func() bool {
		for _, p := range c.describe(c.nodes[0], "__consumer_offsets") {
			if len(p.Replicas) != min(int(c.settings.OffsetsTopicReplicationFactor), n) {
				return false
			}
		}
		return true
	})
	return c
}

// start starts broker i (again) on its addresses and data directory.
func (c *testCluster) start(i int) *node {
	c.t.Helper()
	s := c.settings
	o := nodeOptions{id: int32(i), dataDir: c.dirs[i], raft: c.rafts[i], http: c.https[i], peer: c.peers[i],
		voters: c.voters, settings: &s}
	if i >= len(c.voters) {
		o.bootstrap = c.bootstrap
	}
	c.nodes[i] = startNode(c.t, o)
	return c.nodes[i]
}

// restart starts a stopped broker and waits until it is ready.
func (c *testCluster) restart(i int) {
	c.t.Helper()
	c.start(i).waitReady(c.t)
}

// crash stops broker i abruptly (see node.crash).
func (c *testCluster) crash(i int) {
	c.nodes[i].crash()
	c.nodes[i] = nil
}

// stop stops broker i gracefully.
func (c *testCluster) stop(i int) {
	c.nodes[i].stop()
	c.nodes[i] = nil
}

// any returns a running broker other than the ones in not.
func (c *testCluster) any(not ...int) *node {
	for i, n := range c.nodes {
		if n != nil && !slices.Contains(not, i) {
			return n
		}
	}
	c.t.Fatal("no broker is running")
	return nil
}

// waitSettled waits until every partition of topics is led by its
// preferred replica with every replica in sync, as each running broker's
// metadata shows it and as the leader itself acts on it (its
// kairo_partition_isr series): what an operator waits for after a broker
// restarts, before counting on acks=all or on leaderships staying put.
// Metadata reaches the brokers a few milliseconds apart, and a leader
// learns of an ISR change when the controller's answer arrives, which can
// be after another broker shows it; the controller moves leaderships back
// to preferred replicas only every leader rebalance interval.
func (c *testCluster) waitSettled(timeout time.Duration, topics ...string) time.Duration {
	c.t.Helper()
	return eventually(c.t, timeout, fmt.Sprintf("%v to be led by their preferred replicas, every replica in sync", topics), func() bool {
		for _, n := range c.nodes {
			if n == nil {
				continue
			}
			for _, topic := range topics {
				parts, known := c.describeIfKnown(n, topic)
				if !known {
					return false // the creation has not reached n yet
				}
				for _, p := range parts {
					if p.Leader != p.Replicas[0] || len(p.ISR) != len(p.Replicas) || p.UnderReplicated || c.nodes[p.Leader] == nil {
						return false
					}
					series := fmt.Sprintf(`kairo_partition_isr{broker="%d",partition="%d",topic="%s"}`, p.Leader, p.Partition, topic)
					if metric(c.t, c.nodes[p.Leader], series) != float64(len(p.Replicas)) {
						return false
					}
				}
			}
		}
		return true
	})
}

// partitionView is one partition of a topic description.
type partitionView struct {
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	Adding          []int32 `json:"adding"`
	HighWatermark   int64   `json:"high_watermark"`
	LogEndOffset    int64   `json:"log_end_offset"`
	LogStartOffset  int64   `json:"log_start_offset"`
	UnderReplicated bool    `json:"under_replicated"`
}

// describe returns a topic's partitions as broker n sees them.
func (c *testCluster) describe(n *node, topic string) []partitionView {
	c.t.Helper()
	parts, known := c.describeIfKnown(n, topic)
	if !known {
		c.t.Fatalf("describe %s on broker %d: the topic is unknown there", topic, n.cfg.ID)
	}
	return parts
}

// describeIfKnown is describe, reporting false while broker n has not
// applied the topic's creation: metadata reaches the brokers a moment
// apart, and the broker that created it answers first.
func (c *testCluster) describeIfKnown(n *node, topic string) ([]partitionView, bool) {
	c.t.Helper()
	st, body := n.do(c.t, "GET", "/topics/"+topic, "")
	if st == 404 && strings.Contains(body, `"`+api.CodeUnknownTopic+`"`) {
		return nil, false
	}
	if st != 200 {
		c.t.Fatalf("describe %s on broker %d: %d %s", topic, n.cfg.ID, st, body)
	}
	var d struct {
		Partitions []partitionView `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		c.t.Fatal(err)
	}
	return d.Partitions, true
}

// eventually retries cond every 20 ms until it holds or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// fetchAll reads a partition through broker n from offset 0 to its high
// watermark and returns the messages by offset.
func fetchAll(t testing.TB, n *node, topic string, p int32) []string {
	t.Helper()
	var out []string
	for off := 0; ; {
		r := n.expect(t, "GET", fmt.Sprintf("/fetch?topic=%s&partition=%d&offset=%d&max_records=1000", topic, p, off), "", 200)
		recs := r["records"].([]any)
		for _, rec := range recs {
			m := rec.(map[string]any)
			if int(m["offset"].(float64)) != off {
				t.Fatalf("%s-%d: record at offset %v where %d was expected", topic, p, m["offset"], off)
			}
			out = append(out, m["message"].(string))
			off++
		}
		if len(recs) == 0 || off >= int(r["high_watermark"].(float64)) {
			return out
		}
	}
}

// logBytes concatenates the .log segment files of a partition on broker i:
// the bytes every replica must agree on.
func (c *testCluster) logBytes(i int, topic string, p int32) []byte {
	c.t.Helper()
	names, err := filepath.Glob(filepath.Join(c.dirs[i], fmt.Sprintf("%s-%d", topic, p), "*.log"))
	if err != nil {
		c.t.Fatal(err)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			c.t.Fatal(err)
		}
		buf.Write(data)
	}
	return buf.Bytes()
}

// metric returns the value of one series in broker n's /metrics, or -1.
func metric(t testing.TB, n *node, series string) float64 {
	t.Helper()
	_, body := n.do(t, "GET", "/metrics", "")
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			fmt.Sscan(v, &f)
			return f
		}
	}
	return -1
}
