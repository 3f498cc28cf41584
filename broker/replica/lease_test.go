package replica

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func setLease(c *memCluster, held bool) {
	c.mu.Lock()
	c.leaseLost = !held
	c.mu.Unlock()
}

// Without the metadata lease a leader neither appends nor serves a
// consumer: a produce or fetch waits for the lease and, if it does not
// come back, fails with ErrMetadataNotCurrent (LEADER_NOT_AVAILABLE)
// without writing anything.
func TestLeaderWaitsForTheLease(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("a", 3), AcksAll)
	m := bs[0].manager()

	setLease(c, false)
	if _, _, err := m.Produce(context.Background(), "orders", 0, recordsOf("b", 1), AcksLeader, time.Second); !errors.Is(err, ErrMetadataNotCurrent) {
		t.Errorf("produce without the lease: %v, want ErrMetadataNotCurrent", err)
	}
	if _, err := m.Fetch(context.Background(), "orders", 0, 0, 1<<20, 0, 0); !errors.Is(err, ErrMetadataNotCurrent) {
		t.Errorf("fetch without the lease: %v, want ErrMetadataNotCurrent", err)
	}
	if leo := info(t, bs[0], "orders").LogEndOffset; leo != 3 {
		t.Errorf("log end %d after a produce refused for want of the lease, want 3", leo)
	}

	// A fetch that arrives without the lease is answered once it is back.
	done := make(chan error, 1)
	go func() {
		res, err := m.Fetch(context.Background(), "orders", 0, 0, 1<<20, 0, 0)
		if err == nil && len(res.Records) != 3 {
			err = errors.New("wrong records")
		}
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	setLease(c, true)
	if err := <-done; err != nil {
		t.Errorf("fetch waiting for the lease: %v", err)
	}
}

// The scenario the lease exists for: the leader of a topic is away (its
// metadata frozen, its lease gone) while the topic is deleted and created
// again. A consumer's fetch that reaches it then waits until its metadata
// is confirmed current, by which time its replica of the deleted topic is
// gone: it never returns the deleted topic's records.
func TestStaleLeaderNeverServesADeletedTopic(t *testing.T) {
	c := newMemCluster()
	view := frozenView(c)
	bs := startBrokers(t, c, 3, func(cfg *Config) {
		if cfg.BrokerID == 0 {
			cfg.Metadata = view
		}
	})
	ordersWithID(c, "id-1")
	show(view, c)
	waitLeaderOf(t, bs[0], "orders", "id-1")
	produce(t, bs[0], "orders", recordsOf("old", 5), AcksAll)

	// Broker 0 is away: no lease, no new images.
	setLease(view, false)
	c.remove("orders", 0)
	c.set(PartitionState{Topic: "orders", TopicID: "id-2", Partition: 0, Replicas: []int32{0, 1, 2}, Leader: 1,
		LeaderEpoch: 1, ISR: []int32{1, 2}, PartitionEpoch: 1})
	waitLeaderOf(t, bs[1], "orders", "id-2")
	produce(t, bs[1], "orders", recordsOf("new", 2), AcksAll)

	type result struct {
		res FetchResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := bs[0].manager().Fetch(context.Background(), "orders", 0, 0, 1<<20, 0, 0)
		done <- result{res, err}
	}()
	time.Sleep(100 * time.Millisecond)
	// Back: the images arrive, then the heartbeat confirms them.
	show(view, c)
	setLease(view, true)
	r := <-done
	for _, rec := range r.res.Records {
		if strings.HasPrefix(string(rec.Value), "old-") {
			t.Fatalf("the stale leader served %q of the deleted topic", rec.Value)
		}
	}
	var nl *NotLeaderError
	if !errors.As(r.err, &nl) || nl.Leader != 1 {
		t.Errorf("fetch on the former leader: %d records, %v; want NotLeaderError naming broker 1", len(r.res.Records), r.err)
	}
	eventually(t, 5*time.Second, "broker 0 to replicate the new topic", func() bool {
		p, err := bs[0].manager().partition("orders", 0)
		return err == nil && p.TopicID() == "id-2" && p.log.LogEndOffset() == 2
	})
	if got := values(readAll(t, bs[0], "orders")); !slices.Equal(got, []string{"new-0", "new-1"}) {
		t.Errorf("broker 0's replica: %v", got)
	}
}
