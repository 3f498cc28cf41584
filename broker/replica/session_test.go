package replica

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// sessionOf returns the id of b's fetch session with follower replica and
// whether it holds topic-0; id 0 if there is none.
func sessionOf(b *testBroker, replica int32, topic string) (id uint32, holds bool) {
	m := b.manager()
	m.sessions.mu.Lock()
	s := m.sessions.byReplica[replica]
	m.sessions.mu.Unlock()
	if s == nil {
		return 0, false
	}
	s.mu.Lock() // waits for a parked request to end
	defer s.mu.Unlock()
	_, holds = s.parts[partitionKey{topic, 0}]
	return s.id, holds
}

// replicatedTopics publishes n topics of one partition on brokers 0, 1, 2,
// topic i led by broker i%3, and waits for their leaders.
func replicatedTopics(t *testing.T, c *memCluster, bs []*testBroker, n int) []string {
	t.Helper()
	var topics []string
	for i := range n {
		topic := fmt.Sprintf("t%d", i)
		topics = append(topics, topic)
		c.set(PartitionState{Topic: topic, Partition: 0, Replicas: []int32{0, 1, 2}, Leader: int32(i % 3),
			LeaderEpoch: 1, ISR: []int32{0, 1, 2}, PartitionEpoch: 1})
	}
	for i, topic := range topics {
		waitLeader(t, bs[i%3], topic)
	}
	return topics
}

// An idle follower costs one long poll per leader per
// replica.fetch.wait.max.ms, however many partitions it follows there, and
// that request lists no partition: the leader's session holds them.
func TestIdleFollowersSendOneLongPollPerLeader(t *testing.T) {
	c := newMemCluster()
	const wait = 200 * time.Millisecond
	bs := startBrokers(t, c, 3, func(cfg *Config) { cfg.FetchWait = wait })
	topics := replicatedTopics(t, c, bs, 60)
	for i, topic := range topics {
		produce(t, bs[i%3], topic, recordsOf("r", 1), AcksAll)
	}
	eventually(t, 10*time.Second, "every follower to learn every high watermark", func() bool {
		for _, b := range bs {
			for _, topic := range topics {
				if info(t, b, topic).HighWatermark != 1 {
					return false
				}
			}
		}
		return true
	})

	for _, b := range bs {
		b.takeSessionRequests()
	}
	const idle = 2 * time.Second
	time.Sleep(idle)
	// Each broker leads 20 partitions that 2 followers fetch: fetching
	// per partition would be 40 requests per wait.
	most := 2 * (int(idle/wait) + 2)
	for _, b := range bs {
		reqs := b.takeSessionRequests()
		if len(reqs) == 0 || len(reqs) > most {
			t.Errorf("broker %d received %d fetch requests in %v idle, want between 1 and %d", b.id, len(reqs), idle, most)
		}
		for _, r := range reqs {
			if r.SessionID == 0 || len(r.Partitions) > 0 || len(r.Forgotten) > 0 {
				t.Errorf("broker %d: idle request of broker %d: session %d epoch %d, %d partitions, %d forgotten; want an incremental request listing none",
					b.id, r.ReplicaID, r.SessionID, r.SessionEpoch, len(r.Partitions), len(r.Forgotten))
				break
			}
		}
	}
}

// A leader change moves a partition from the follower's session with the
// old leader to its session with the new one; the old session goes on,
// without the partition, and is not restarted.
func TestLeaderChangeMovesAPartitionBetweenSessions(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "moving", nil)
	threeReplicas(c, "staying", nil)
	waitLeader(t, bs[0], "moving")
	waitLeader(t, bs[0], "staying")
	produce(t, bs[0], "moving", recordsOf("a", 2), AcksAll)
	produce(t, bs[0], "staying", recordsOf("a", 2), AcksAll)
	before, holds := sessionOf(bs[0], 1, "moving")
	if before == 0 || !holds {
		t.Fatalf("broker 1's session on broker 0: id %d, holds the partition %v", before, holds)
	}

	c.update("moving", 0, func(s *PartitionState) { s.Leader = 2 })
	waitLeader(t, bs[2], "moving")
	produce(t, bs[2], "moving", recordsOf("b", 3), AcksAll)
	produce(t, bs[0], "staying", recordsOf("b", 3), AcksAll)
	eventually(t, 5*time.Second, "broker 0's session of broker 1 to let go of the partition", func() bool {
		_, holds := sessionOf(bs[0], 1, "moving")
		return !holds
	})
	if after, _ := sessionOf(bs[0], 1, "staying"); after != before {
		t.Errorf("broker 1's session on broker 0 was restarted: id %d, then %d", before, after)
	}
	if id, holds := sessionOf(bs[2], 1, "moving"); id == 0 || !holds {
		t.Errorf("broker 1's session on broker 2: id %d, holds the partition %v", id, holds)
	}
	for _, b := range bs {
		if got := values(readAll(t, b, "moving")); !slices.Equal(got, []string{"a-0", "a-1", "b-0", "b-1", "b-2"}) {
			t.Errorf("broker %d: %v", b.id, got)
		}
	}
}

// A follower whose log diverged on one partition truncates it from the
// leader's answer in the same session, while the other partitions of the
// session go on: no session restart, no separate request.
func TestDivergedPartitionTruncatesWithinTheSession(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "diverging", nil)
	threeReplicas(c, "steady", nil)
	waitLeader(t, bs[0], "diverging")
	waitLeader(t, bs[0], "steady")
	produce(t, bs[0], "diverging", recordsOf("committed", 5), AcksAll)
	produce(t, bs[0], "steady", recordsOf("committed", 5), AcksAll)

	// Broker 1 leads alone for a while and writes what nobody copies.
	bs[0].stop(t)
	bs[2].stop(t)
	for _, topic := range []string{"diverging", "steady"} {
		c.update(topic, 0, func(s *PartitionState) { s.Leader = 1; s.ISR = []int32{1} })
		waitLeader(t, bs[1], topic)
	}
	produce(t, bs[1], "diverging", recordsOf("lost", 2), AcksLeader)

	// Broker 0 leads both again, without broker 1's tail.
	for _, topic := range []string{"diverging", "steady"} {
		c.update(topic, 0, func(s *PartitionState) { s.Leader = 0; s.ISR = []int32{0} })
	}
	bs[0].start(t)
	bs[2].start(t)
	waitLeader(t, bs[0], "diverging")
	waitLeader(t, bs[0], "steady")
	var first uint32
	eventually(t, 5*time.Second, "broker 1 to open a session on broker 0", func() bool {
		first, _ = sessionOf(bs[0], 1, "steady")
		return first != 0
	})
	eventually(t, 5*time.Second, "broker 1 to truncate the diverged partition", func() bool {
		return info(t, bs[1], "diverging").LogEndOffset == 5
	})
	produce(t, bs[0], "steady", recordsOf("more", 3), AcksLeader)
	produce(t, bs[0], "diverging", recordsOf("new", 2), AcksLeader)
	eventually(t, 5*time.Second, "broker 1 to copy both partitions", func() bool {
		return info(t, bs[1], "steady").LogEndOffset == 8 && info(t, bs[1], "diverging").LogEndOffset == 7
	})
	if got := values(readAll(t, bs[1], "diverging")); slices.Contains(got, "lost-0") || !slices.Contains(got, "new-1") {
		t.Errorf("broker 1's diverged partition: %v", got)
	}
	if id, _ := sessionOf(bs[0], 1, "steady"); id != first {
		t.Errorf("broker 1's session on broker 0 was restarted by the truncation: id %d, then %d", first, id)
	}
}

// A follower far behind on many partitions catches up on every one of
// them under a reply bound that holds only a few batches: each reply
// carries what fits and the next starts where it stopped.
func TestCatchUpOnManyPartitionsUnderASmallReplyBound(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, func(cfg *Config) {
		cfg.FetchMaxBytes = 1024
		cfg.FetchResponseMaxBytes = 2048
	})
	topics := replicatedTopics(t, c, bs, 30)
	bs[2].stop(t)
	for round := range 10 {
		for i, topic := range topics {
			if i%3 != 2 {
				produce(t, bs[i%3], topic, recordsOf(fmt.Sprintf("round%d-padding-padding-padding", round), 3), AcksLeader)
			}
		}
	}
	bs[2].start(t)
	eventually(t, 20*time.Second, "broker 2 to catch up on every partition", func() bool {
		for i, topic := range topics {
			if info(t, bs[2], topic).LogEndOffset != info(t, bs[i%3], topic).LogEndOffset {
				return false
			}
		}
		return true
	})
	for i, topic := range topics {
		if got, want := values(readAll(t, bs[2], topic)), values(readAll(t, bs[i%3], topic)); !slices.Equal(got, want) {
			t.Errorf("%s on broker 2: %d records, leader %d", topic, len(got), len(want))
		}
	}
}

// A partition a follower starts following while its session is parked on
// the leader does not wait for the long poll to end: the follower nudges
// the session, and the next request carries the partition.
func TestPartitionJoinsAParkedSessionAtOnce(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, func(cfg *Config) {
		cfg.FetchWait = 4 * time.Second
		cfg.ReplicaLagTimeMax = time.Minute
	})
	threeReplicas(c, "first", nil)
	waitLeader(t, bs[0], "first")
	produce(t, bs[0], "first", recordsOf("a", 1), AcksAll)
	time.Sleep(200 * time.Millisecond) // the sessions park again

	threeReplicas(c, "joining", nil)
	waitLeader(t, bs[0], "joining")
	start := time.Now()
	if _, _, err := bs[0].manager().Produce(context.Background(), "joining", 0, recordsOf("b", 1), AcksAll, 2*time.Second); err != nil {
		t.Fatalf("acks=all produce to a partition that joined parked sessions: %v after %v", err, time.Since(start))
	}
}
