package cluster

import (
	"strings"
	"testing"
	"time"

	metrics "github.com/armon/go-metrics"
)

// An idle cluster commits nothing, and the controller sends its followers
// raft heartbeats but (almost) no appends: followers hear of commits when
// there are some (commit.go), not from an append every 50–100 ms. Raft
// counts every append it sends in its metrics.
func TestIdleClusterCommitsNothingAndSendsNoAppends(t *testing.T) {
	sink := metrics.NewInmemSink(time.Minute, 10*time.Minute)
	mcfg := metrics.DefaultConfig("")
	mcfg.EnableHostname, mcfg.EnableRuntimeMetrics = false, false
	if _, err := metrics.NewGlobal(mcfg, sink); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = metrics.NewGlobal(mcfg, &metrics.BlackholeSink{}) })

	c := newTestCluster(t, 3)
	c.startAll()
	c.syncISRs()
	if _, err := c.node(0).CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "t", Partitions: 6, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	ctl := c.controller()
	c.eventually(10*time.Second, "every ISR full", func() bool {
		for _, p := range ctl.Image().Topic("t").Partitions {
			if len(p.ISR) != 3 {
				return false
			}
		}
		return true
	})
	time.Sleep(time.Second) // the last announcements

	const window = 4 * time.Second
	index, appends := ctl.raft.LastIndex(), appendsSent(sink)
	time.Sleep(window)
	if got := ctl.raft.LastIndex(); got != index {
		t.Errorf("an idle cluster appended raft entries %d to %d over %v", index+1, got, window)
	}
	// The backstop timer sends each of the two followers one append a
	// second or less; the library's default timer sent one every
	// 50–100 ms (about 100 over this window).
	limit := 2 * int(window/time.Second+1)
	if n := appendsSent(sink) - appends; n > limit {
		t.Errorf("the controller sent %d appends to its followers over an idle %v, want at most %d", n, window, limit)
	}
}

// appendsSent counts the AppendEntries (not heartbeats) raft has sent, as
// its metrics record them.
func appendsSent(sink *metrics.InmemSink) int {
	n := 0
	for _, interval := range sink.Data() {
		interval.RLock()
		for key, s := range interval.Samples {
			if strings.HasPrefix(key, "raft.replication.appendEntries.rpc;") {
				n += s.Count
			}
		}
		interval.RUnlock()
	}
	return n
}

// Followers apply a command as soon as the controller has committed it,
// without waiting for raft's commit timer (set to an hour here): the
// controller announces each commit. Without the announcements no broker
// but the controller would even finish registering.
func TestFollowersApplyCommitsAtOnce(t *testing.T) {
	c := newTestCluster(t, 3)
	for _, v := range c.voters {
		cfg := c.config(v.ID, "")
		cfg.raftCommitTimeout = time.Hour
		c.start(cfg)
	}
	c.waitReady()
	ctl := c.controller()
	if _, err := ctl.CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "t", Partitions: 3, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.running() {
		c.eventually(5*time.Second, "the topic on every broker", func() bool { return n.Image().Topic("t") != nil })
	}
	// A follower that takes over announces what it inherited.
	c.crash(ctl.ID())
	next := c.controller()
	if _, err := next.CreateTopic(ctxTimeout(t, 10*time.Second), CreateTopicRequest{Name: "u", Partitions: 3, ReplicationFactor: 2}); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.running() {
		c.eventually(5*time.Second, "the second topic on every broker left", func() bool { return n.Image().Topic("u") != nil })
	}
}
