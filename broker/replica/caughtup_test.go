package replica

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// staleImage is what a restarted broker replays before it has caught up:
// a copy of the metadata as it was, marked not caught up.
func staleImage(c *memCluster) *memCluster {
	stale := newMemCluster()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, st := range c.parts {
		stale.parts[k] = clonePartitionState(st)
	}
	for id, a := range c.addrs {
		stale.addrs[id] = a
	}
	stale.caughtUp = false
	return stale
}

// catchUp gives stale the current metadata and marks it caught up, without
// a change notification: catching up need not change the image.
func catchUp(stale, c *memCluster) {
	c.mu.Lock()
	parts := map[partitionKey]PartitionState{}
	for k, st := range c.parts {
		parts[k] = clonePartitionState(st)
	}
	c.mu.Unlock()
	stale.mu.Lock()
	stale.parts, stale.caughtUp = parts, true
	stale.mu.Unlock()
}

// refusesAsLeader checks that b neither accepts a produce, nor answers a
// consumer fetch, nor serves a follower's fetch for topic-0 in epoch.
func refusesAsLeader(t *testing.T, b *testBroker, topic string, epoch int) {
	t.Helper()
	_, _, err := b.manager().Produce(context.Background(), topic, 0, recordsOf("stale", 1), AcksLeader, time.Second)
	var nl *NotLeaderError
	if !errors.As(err, &nl) {
		t.Errorf("acks=1 produce on a stale image: %v, want NotLeaderError", err)
	}
	if _, err := b.manager().Fetch(context.Background(), topic, 0, 0, 1<<20, 0, 0); !errors.As(err, &nl) {
		t.Errorf("consumer fetch on a stale image: %v, want NotLeaderError", err)
	}
	for _, lastFetched := range []int{-1, epoch} {
		req := replicaRequest(topic, epoch)
		partitionOf(req)["last_fetched_epoch"] = lastFetched
		status, body, reply := internalCall(t, b, req)
		if code, _, _ := answerCode(reply, topic); status == http.StatusOK && code == "" {
			t.Errorf("follower fetch in epoch %d (last fetched epoch %d) on a stale image: answered (%d %+v), want a refusal",
				epoch, lastFetched, status, body)
		}
	}
	if i := info(t, b, topic); i.IsLeader {
		t.Errorf("leads on a stale image: %+v", i)
	}
}

// A broker restarted on an image that still names it leader, though the
// leadership has moved while it was down, must not write as leader before
// its metadata has caught up: an acks=1 record accepted there would be
// truncated away once it learns of the real leader.
func TestRestartedBrokerDoesNotLeadOnAStaleImage(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("a", 5), AcksAll)
	stale := staleImage(c) // broker 0 leads in epoch 1

	bs[0].stop(t)
	c.update("orders", 0, func(s *PartitionState) { s.Leader = 1; s.ISR = []int32{1, 2} }) // epoch 2
	waitLeader(t, bs[1], "orders")
	produce(t, bs[1], "orders", recordsOf("b", 3), AcksAll)

	bs[0].cfg = func(cfg *Config) { cfg.Metadata = stale }
	bs[0].start(t)
	time.Sleep(100 * time.Millisecond) // several reconciles and polls of the stale image
	refusesAsLeader(t, bs[0], "orders", 1)

	catchUp(stale, c)
	eventually(t, 5*time.Second, "broker 0 to follow broker 1", func() bool {
		i := info(t, bs[0], "orders")
		return !i.IsLeader && i.Leader == 1 && i.LogEndOffset == 8
	})
	_, _, err := bs[0].manager().Produce(context.Background(), "orders", 0, recordsOf("c", 1), AcksLeader, time.Second)
	var nl *NotLeaderError
	if !errors.As(err, &nl) || nl.Leader != 1 || nl.Epoch != 2 {
		t.Errorf("produce after catching up: %v, want NotLeaderError naming broker 1 in epoch 2", err)
	}
	if got := values(readAll(t, bs[0], "orders")); len(got) != 8 || got[5] != "b-0" {
		t.Errorf("broker 0's log after catching up: %v, want a-0..a-4, b-0..b-2", got)
	}
}

// A broker whose caught-up image confirms its leadership leads once it has
// caught up, not before.
func TestRestartedLeaderLeadsOnceCaughtUp(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("a", 5), AcksAll)

	bs[0].stop(t)
	stale := staleImage(c)
	bs[0].cfg = func(cfg *Config) { cfg.Metadata = stale }
	bs[0].start(t)
	time.Sleep(100 * time.Millisecond)
	refusesAsLeader(t, bs[0], "orders", 1)

	catchUp(stale, c)
	waitLeader(t, bs[0], "orders")
	if base, _ := produce(t, bs[0], "orders", recordsOf("b", 1), AcksAll); base != 5 {
		t.Errorf("first produce after catching up at offset %d, want 5", base)
	}
}
