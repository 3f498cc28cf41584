package replica

import (
	"slices"
	"testing"
	"time"
)

// A broker elected leader that wrote nothing before it lost the leadership
// has its new epoch in its epoch cache, starting at its log end. Following
// the next leader, whose log holds batches of the epoch before beyond that
// offset, it truncates to its log end — which removes no record but must
// drop that epoch (Kafka's truncateTo), or it refuses the older-epoch
// batches forever and never rejoins the ISR.
func TestLeaderThatWroteNothingFollowsTheNextLeader(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 2, nil)
	c.set(PartitionState{Topic: "orders", Partition: 0, Replicas: []int32{0, 1}, Leader: 0,
		LeaderEpoch: 1, ISR: []int32{0, 1}, PartitionEpoch: 1})
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("a", 5), AcksAll)

	// Broker 1 misses three records of epoch 1.
	bs[1].stop(t)
	produce(t, bs[0], "orders", recordsOf("b", 3), AcksLeader)

	// Broker 0 goes away and broker 1 leads epoch 2 at offset 5, writing
	// nothing.
	bs[0].stop(t)
	c.update("orders", 0, func(s *PartitionState) { s.Leader = 1 }) // epoch 2
	bs[1].start(t)
	waitLeader(t, bs[1], "orders")
	if e := info(t, bs[1], "orders").LeaderEpoch; e != 2 {
		t.Fatalf("broker 1 leads in epoch %d, want 2", e)
	}

	// Broker 0 comes back and leads epoch 3 with its epoch 1 records up to 8.
	c.update("orders", 0, func(s *PartitionState) { s.Leader = 0 }) // epoch 3
	bs[0].start(t)
	waitLeader(t, bs[0], "orders")

	eventually(t, 5*time.Second, "broker 1 to copy the epoch 1 records it missed", func() bool {
		return info(t, bs[1], "orders").LogEndOffset == 8 && info(t, bs[0], "orders").HighWatermark == 8
	})
	want := []string{"a-0", "a-1", "a-2", "a-3", "a-4", "b-0", "b-1", "b-2"}
	if got := values(readAll(t, bs[1], "orders")); !slices.Equal(got, want) {
		t.Errorf("broker 1's log = %v, want %v", got, want)
	}
	p, err := bs[1].manager().partition("orders", 0)
	if err != nil {
		t.Fatal(err)
	}
	if e := p.log.LatestEpoch(); e != 1 {
		t.Errorf("broker 1's latest epoch = %d, want 1 (epoch 2 wrote nothing)", e)
	}
}
