package replica

import (
	"context"
	"errors"
	"testing"
	"time"
)

// An acks=all produce whose leadership moves before the followers have the
// batch fails with ErrLeaderMovedAfterAppend, never with a NotLeaderError:
// the batch is already in the log and may be kept by the new leader, so a
// caller that took it for "not written" and forwarded it to the new leader
// would store it twice (as the end-to-end suite saw during a rolling
// restart: one request, one value, at two adjacent offsets).
func TestAcksAllLeaderMovedAfterAppend(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", map[string]string{"min.insync.replicas": "2"})
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("a", 1), AcksAll)

	// The followers stop fetching but stay in the ISR for a while, so the
	// next acks=all batch is appended and then waits.
	bs[1].stop(t)
	bs[2].stop(t)
	errc := make(chan error, 1)
	go func() {
		_, _, err := bs[0].manager().Produce(context.Background(), "orders", 0, recordsOf("b", 1), AcksAll, 10*time.Second)
		errc <- err
	}()
	eventually(t, 5*time.Second, "the batch to be appended", func() bool {
		return info(t, bs[0], "orders").LogEndOffset == 2
	})
	c.update("orders", 0, func(s *PartitionState) { s.Leader = 1 })

	var nl *NotLeaderError
	select {
	case err := <-errc:
		if !errors.Is(err, ErrLeaderMovedAfterAppend) {
			t.Errorf("acks=all across a leader change: %v, want ErrLeaderMovedAfterAppend", err)
		}
		if errors.As(err, &nl) {
			t.Errorf("acks=all across a leader change answers a NotLeaderError (%v): callers would write the batch again", nl)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("acks=all still waiting 5s after the leader changed")
	}

	// A produce that arrives after the move writes nothing and names the
	// new leader, so forwarding it is safe.
	waitFollower := func() bool { return !info(t, bs[0], "orders").IsLeader }
	eventually(t, 5*time.Second, "broker 0 to follow", waitFollower)
	before := info(t, bs[0], "orders").LogEndOffset
	_, _, err := bs[0].manager().Produce(context.Background(), "orders", 0, recordsOf("c", 1), AcksAll, time.Second)
	if !errors.As(err, &nl) || nl.Leader != 1 {
		t.Errorf("produce on the deposed leader: %v, want NotLeader(leader 1)", err)
	}
	if after := info(t, bs[0], "orders").LogEndOffset; after != before {
		t.Errorf("a refused produce wrote: log end %d -> %d", before, after)
	}
}
