package httpapi_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/config"
)

// groupState is what a group's clients rely on, as one comparable string:
// members, committed offsets, the saved assignment and the group config.
func groupState(t *testing.T, n *node, g string) string {
	t.Helper()
	members := ids(n.expect(t, "GET", "/groups/members?group="+g, "", 200)["members"])
	offsets := n.expect(t, "GET", "/groups/"+g+"/offsets", "", 200)["offsets"]
	saved := n.expect(t, "GET", "/groups/assignments?group="+g+"&topic=orders", "", 200)
	d := n.expect(t, "GET", "/groups/"+g, "", 200)
	return mustJSON(map[string]any{"members": members, "offsets": offsets, "saved": saved,
		"session": d["session_timeout_ms"], "strategy": d["assignment_strategy"]})
}

// TestGroupStateSurvivesCompactionCoordinatorMoveAndRestart: a coordinator
// compacts its __consumer_offsets partition (snapshot, then the log start
// moves on every replica); the coordinator crashes and another replays the
// compacted partition; then the whole cluster restarts. The group looks
// the same to its clients throughout.
func TestGroupStateSurvivesCompactionCoordinatorMoveAndRestart(t *testing.T) {
	c := newTestCluster(t, 3, 3, func(s *config.Settings) {
		s.OffsetsTopicNumPartitions = 1
		s.OffsetsTopicSegmentBytes = 1 << 20 // the smallest segment.bytes a topic takes
		s.OffsetsCompactBytes = 1024
	})
	n0 := c.nodes[0]
	n0.expect(t, "POST", "/topics", `{"name":"orders","partitions":4,"replication_factor":3}`, 201)
	waitTopic(t, c.nodes, "orders", 4)
	const g = "analytics-workers"
	n0.expect(t, "PUT", "/groups/"+g+"/config", `{"session_timeout_ms":45000,"assignment_strategy":"roundrobin"}`, 200)
	for _, m := range []string{"member-a", "member-b", "member-c"} {
		c.nodes[1].expect(t, "POST", "/groups/join", fmt.Sprintf(`{"group":%q,"member_id":%q}`, g, m), 200)
	}
	c.nodes[2].expect(t, "POST", "/groups/rebalance", `{"group":"`+g+`","topic":"orders"}`, 200)
	commit := func(n *node, p, off int) {
		n.expect(t, "POST", "/offsets/commit", fmt.Sprintf(`{"group":%q,"topic":"orders","partition":%d,"offset":%d}`, g, p, off), 200)
	}
	for i := range 200 {
		commit(c.nodes[i%3], i%4, i)
	}
	c.nodes[0].expect(t, "POST", "/groups/leave", fmt.Sprintf(`{"group":%q,"member_id":"member-c"}`, g), 200)
	want := groupState(t, n0, g)

	// The journal was compacted: the log start moved on the leader and on
	// every follower.
	var logStart int64
	eventually(t, 10*time.Second, "the group journal to be compacted", func() bool {
		logStart = c.describe(n0, "__consumer_offsets")[0].LogStartOffset
		return logStart > 0
	})
	coordinator := int(c.describe(n0, "__consumer_offsets")[0].Leader)
	for _, n := range c.nodes {
		series := fmt.Sprintf(`kairo_log_start_offset{broker="%d",partition="0",topic="__consumer_offsets"}`, n.cfg.ID)
		eventually(t, 10*time.Second, "followers to follow the log start", func() bool { return metric(t, n, series) >= float64(logStart) })
	}
	t.Logf("journal log start %d after 200 commits", logStart)

	// The coordinator crashes; another replays the compacted partition.
	c.crash(coordinator)
	other := c.any()
	eventually(t, 20*time.Second, "another broker to coordinate the group", func() bool {
		st, _ := other.do(t, "GET", "/groups/"+g, "")
		return st == 200
	})
	if got := groupState(t, other, g); got != want {
		t.Fatalf("after the coordinator moved:\n%s\nwant\n%s", got, want)
	}
	commit(other, 3, 1000)
	want = groupState(t, other, g)

	// The crashed broker comes back, then the whole cluster restarts.
	c.restart(coordinator)
	for i := range c.nodes {
		c.stop(i)
	}
	for i := range c.nodes {
		c.start(i)
	}
	for _, n := range c.nodes {
		n.waitReady(t)
	}
	for _, n := range c.nodes {
		if got := groupState(t, n, g); got != want {
			t.Fatalf("after a full restart, through broker %d:\n%s\nwant\n%s", n.cfg.ID, got, want)
		}
	}
}
