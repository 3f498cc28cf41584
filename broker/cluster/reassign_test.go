package cluster

import (
	"slices"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// TestReassignPartitions, through a broker that is not the controller: a
// partition given new replicas gets them once the added one is in sync,
// led by the first; a reassignment onto a stopped broker stays in
// progress, is listed, and a cancellation undoes it; every partition that
// cannot move is answered with its code and keeps its replicas.
func TestReassignPartitions(t *testing.T) {
	c := newTestCluster(t, 3)
	c.startAll()
	c.syncISRs()
	ctx := ctxTimeout(t, 60*time.Second)
	ctl := c.controller()
	n := c.otherThan(ctl)
	if _, err := n.CreateTopic(ctx, CreateTopicRequest{Name: "r", Partitions: 2, ReplicationFactor: 2}); err != nil {
		t.Fatal(err)
	}
	c.eventually(10*time.Second, "full ISRs", func() bool {
		for _, p := range n.Image().Topic("r").Partitions {
			if len(p.ISR) != 2 {
				return false
			}
		}
		return true
	})
	p0 := n.Image().Partition("r", 0)
	var spare int // the broker without a replica of partition 0
	for id := range 3 {
		if !slices.Contains(p0.Replicas, id) {
			spare = id
		}
	}
	target := []int{spare, p0.Replicas[0]}
	ans, err := n.ReassignPartitions(ctx, []PartitionReassignment{
		{Topic: "r", Partition: 0, Replicas: target},
		{Topic: "r", Partition: 1, Cancel: true},
		{Topic: "r", Partition: 1, Replicas: []int{0, 9}},
		{Topic: "r", Partition: 1, Replicas: []int{0, 0}},
		{Topic: "r", Partition: 1, Replicas: []int{}},
		{Topic: "r", Partition: 5, Replicas: []int{0}},
		{Topic: "nope", Partition: 0, Replicas: []int{0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"", api.CodeNoReassignmentInProgress, api.CodeInvalidArgument, api.CodeInvalidArgument,
		api.CodeInvalidArgument, api.CodeUnknownPartition, api.CodeUnknownTopic}
	for i, a := range ans {
		if a.Code != want[i] {
			t.Errorf("answer %d: %+v, want code %q", i, a, want[i])
		}
	}
	c.eventually(10*time.Second, "partition 0 on its new replicas", func() bool {
		p := n.Image().Partition("r", 0)
		return slices.Equal(p.Replicas, target) && !p.Reassigning() && len(p.ISR) == 2
	})
	if p1 := n.Image().Partition("r", 1); len(p1.Replicas) != 2 || p1.Reassigning() {
		t.Fatalf("partition 1 after refused moves: %s", describe(p1))
	}

	// Onto a stopped broker a move cannot complete: listed, then undone.
	away := c.otherThan(ctl, n).ID()
	c.stop(away)
	c.eventually(10*time.Second, "the stopped broker fenced", func() bool { return !n.Image().Live(away) })
	if _, err := n.CreateTopic(ctx, CreateTopicRequest{Name: "s", Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	before := n.Image().Partition("s", 0).Replicas
	if ans, err = n.ReassignPartitions(ctx, []PartitionReassignment{{Topic: "s", Partition: 0, Replicas: []int{before[0], away}}}); err != nil || ans[0].Code != "" {
		t.Fatalf("reassign onto stopped broker %d: %+v %v", away, ans, err)
	}
	listed := n.Reassignments(nil)
	if len(listed) != 1 || listed[0].Topic != "s" || !slices.Equal(listed[0].Adding, []int{away}) {
		t.Fatalf("reassignments in progress: %+v", listed)
	}
	if ans, err = n.ReassignPartitions(ctx, []PartitionReassignment{{Topic: "s", Partition: 0, Cancel: true}}); err != nil || ans[0].Code != "" {
		t.Fatalf("cancel: %+v %v", ans, err)
	}
	if p := n.Image().Partition("s", 0); !slices.Equal(p.Replicas, before) || p.Reassigning() {
		t.Fatalf("after the cancellation: %s, want replicas %v", describe(p), before)
	}
	if listed := n.Reassignments([]string{"s"}); len(listed) != 0 {
		t.Fatalf("reassignments after the cancellation: %+v", listed)
	}
}
