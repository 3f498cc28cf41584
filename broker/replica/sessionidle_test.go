package replica

import (
	"context"
	"slices"
	"testing"
	"time"
)

// looks returns, per broker, how many times the sessions it serves looked
// at a partition and how many partition entries its fetchers built.
func looks(bs []*testBroker) (examined, built []int64) {
	for _, b := range bs {
		m := b.manager()
		examined = append(examined, m.examinations.Load())
		built = append(built, m.entriesBuilt.Load())
	}
	return examined, built
}

// An idle session is answered without looking at its partitions, and an
// idle follower builds its requests without looking at the partitions it
// follows; yet every request still counts as a fetch of each of them at
// the log end, so the followers stay in every ISR well past the lag time.
func TestIdleSessionsLookAtNoPartition(t *testing.T) {
	c := newMemCluster()
	const wait = 200 * time.Millisecond
	const lagMax = 2 * time.Second
	bs := startBrokers(t, c, 3, func(cfg *Config) {
		cfg.FetchWait = wait
		cfg.ReplicaLagTimeMax = lagMax
	})
	topics := replicatedTopics(t, c, bs, 30)
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
	time.Sleep(3 * wait) // the requests that settle the last partitions

	alters := c.alters.Load()
	examined, built := looks(bs)
	const idle = 5 * time.Second // two and a half lag times
	time.Sleep(idle)
	examinedAfter, builtAfter := looks(bs)
	for i, b := range bs {
		if n := examinedAfter[i] - examined[i]; n != 0 {
			t.Errorf("broker %d: its sessions looked at partitions %d times in %v idle, want 0", b.id, n, idle)
		}
		if n := builtAfter[i] - built[i]; n != 0 {
			t.Errorf("broker %d: its fetchers built %d partition entries in %v idle, want 0", b.id, n, idle)
		}
	}
	if n := c.alters.Load() - alters; n != 0 {
		t.Errorf("%d ISR changes proposed while idle", n)
	}
	for _, topic := range topics {
		if isr := c.state(topic, 0).ISR; len(isr) != 3 {
			t.Errorf("%s: ISR %v after %v idle with a lag time of %v", topic, isr, idle, lagMax)
		}
	}

	// The sessions still carry everything: a record produced now reaches
	// every follower and the high watermark.
	produce(t, bs[0], topics[0], recordsOf("after", 1), AcksAll)
	for _, b := range bs {
		if got := values(readAll(t, b, topics[0])); !slices.Equal(got, []string{"r-0", "after-0"}) {
			t.Errorf("broker %d: %v", b.id, got)
		}
	}
}

// An append to one partition of a session whose other partitions are idle
// ends the parked request at once: acks=all returns long before the wait
// would have ended, and the leader looks at that partition, not at every
// partition of the session.
func TestAppendToOnePartitionOfAnIdleSession(t *testing.T) {
	c := newMemCluster()
	const wait = 4 * time.Second
	bs := startBrokers(t, c, 3, func(cfg *Config) {
		cfg.FetchWait = wait
		cfg.ReplicaLagTimeMax = time.Minute
	})
	var topics []string
	for i := range 30 {
		topic := "idle" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		topics = append(topics, topic)
		threeReplicas(c, topic, nil)
	}
	for _, topic := range topics {
		waitLeader(t, bs[0], topic)
		produce(t, bs[0], topic, recordsOf("r", 1), AcksAll)
	}
	eventually(t, 3*wait, "every follower to learn every high watermark", func() bool {
		for _, b := range bs[1:] {
			for _, topic := range topics {
				if info(t, b, topic).HighWatermark != 1 {
					return false
				}
			}
		}
		return true
	})
	time.Sleep(200 * time.Millisecond) // both sessions park again

	examined, _ := looks(bs)
	start := time.Now()
	if _, _, err := bs[0].manager().Produce(context.Background(), topics[7], 0, recordsOf("new", 1), AcksAll, wait/2); err != nil {
		t.Fatalf("acks=all produce to one partition of idle sessions: %v after %v", err, time.Since(start))
	}
	t.Logf("acks=all took %v with the followers parked for up to %v", time.Since(start).Round(time.Millisecond), wait)
	examinedAfter, _ := looks(bs)
	// Looking at every partition once per follower would be 60.
	if n := examinedAfter[0] - examined[0]; n >= int64(2*len(topics)) {
		t.Errorf("the leader looked at partitions %d times to answer one append, want fewer than %d", n, 2*len(topics))
	}
	for _, b := range bs[1:] {
		if got := values(readAll(t, b, topics[7])); !slices.Equal(got, []string{"r-0", "new-0"}) {
			t.Errorf("broker %d: %v", b.id, got)
		}
	}
}
