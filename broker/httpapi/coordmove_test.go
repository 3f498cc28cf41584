package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/config"
)

// TestCoordinatorMoveDoesNotWaitForASlowReset: a reset-offsets on the
// group's coordinator reads the offsets of partitions led by brokers that
// answer slowly (4 s per partition); meanwhile the coordinator's
// __consumer_offsets partition moves away (its broker is drained). The old
// coordinator closes at once, the reset answers the retriable 503
// COORDINATOR_NOT_AVAILABLE, and the broker goes on applying metadata: a
// partition it is given afterwards takes produce requests.
//
// Before the reset read those offsets outside its group's lock and before
// closing a coordinator stopped taking group locks, the broker's metadata
// goroutine waited for the whole reset (a minute here): the produce below
// kept failing with NOT_LEADER and the reset answered 200 long after its
// group had moved.
func TestCoordinatorMoveDoesNotWaitForASlowReset(t *testing.T) {
	c := newTestCluster(t, 3, 3, func(s *config.Settings) {
		s.OffsetsTopicNumPartitions = 1
		s.OffsetsTopicReplicationFactor = 2
	})
	n0 := c.nodes[0]
	const g = "analytics-workers"
	coord := int(c.describe(n0, "__consumer_offsets")[0].Leader)
	a := c.nodes[coord]
	n0.expect(t, "POST", "/topics", `{"name":"orders","partitions":24,"replication_factor":1}`, 201)
	waitTopic(t, c.nodes, "orders", 24)
	remote := 0
	for _, p := range c.describe(n0, "orders") {
		if int(p.Leader) != coord {
			remote++
		}
	}
	a.expect(t, "POST", "/offsets/commit", `{"group":"`+g+`","topic":"orders","partition":0,"offset":0}`, 200)

	// The other brokers answer offsets requests slowly, each below the
	// coordinator's per-request timeout, so a reset takes remote × 4 s.
	seen := make(chan struct{}, 1024)
	for i, n := range c.nodes {
		if i == coord {
			continue
		}
		s := n.requests.slowDown("/internal/broker/offsets", 4*time.Second)
		go func() {
			for range s {
				seen <- struct{}{}
			}
		}()
	}
	type answer struct {
		status int
		body   string
		at     time.Time
	}
	resetDone := make(chan answer, 1)
	go func() {
		st, body := a.do(t, "POST", "/groups/"+g+"/reset-offsets", `{"to":"earliest","topics":["orders"]}`)
		resetDone <- answer{st, body, time.Now()}
	}()
	select {
	case <-seen:
	case <-time.After(20 * time.Second):
		t.Fatal("the reset never asked another broker for offsets")
	}
	t.Logf("the reset reads %d partitions from the slow brokers", remote)

	// The group's coordinator moves: its broker is drained.
	a.expect(t, "POST", fmt.Sprintf("/brokers/%d/drain", coord), "", 202)
	eventually(t, 30*time.Second, "broker to be drained", func() bool {
		b := n0.expect(t, "GET", fmt.Sprintf("/brokers/%d", coord), "", 200)
		return b["state"] == "drained"
	})
	moved := time.Now()
	if l := int(c.describe(n0, "__consumer_offsets")[0].Leader); l == coord {
		t.Fatalf("the group's coordinator is still broker %d after the drain", l)
	}

	select {
	case r := <-resetDone:
		if r.status != 503 || !strings.Contains(r.body, `"COORDINATOR_NOT_AVAILABLE"`) {
			t.Errorf("reset during the coordinator move = %d %s, want 503 COORDINATOR_NOT_AVAILABLE", r.status, r.body)
		}
	case <-time.After(20 * time.Second):
		t.Error("the reset still runs 20 s after its coordinator moved away")
	}

	// The drained broker takes partitions again and serves them: its
	// metadata goroutine is not stuck behind the old coordinator.
	a.expect(t, "POST", fmt.Sprintf("/brokers/%d/cancel-drain", coord), "", 200)
	n0.expect(t, "POST", "/topics", `{"name":"probe","partitions":3,"replication_factor":1}`, 201)
	probe := int32(-1)
	for _, p := range c.describe(n0, "probe") {
		if int(p.Leader) == coord {
			probe = p.Partition
		}
	}
	if probe < 0 {
		t.Fatalf("no partition of probe was placed on broker %d", coord)
	}
	took := eventually(t, 20*time.Second, "the drained broker to serve its new partition", func() bool {
		st, _ := a.do(t, "POST", "/produce", fmt.Sprintf(`{"topic":"probe","partition":%d,"message":"after the move"}`, probe))
		return st == 200
	})
	t.Logf("broker %d served its new partition %v after the coordinator move (%v after the drain)", coord, took, time.Since(moved))
}
