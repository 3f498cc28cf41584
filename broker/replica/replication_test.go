package replica

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestHighWatermarkAdvancesWithThreeReplicas(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")

	for i := range 10 {
		produce(t, bs[0], "orders", recordsOf("v", i+1), AcksLeader)
	}
	const n = 55 // 1+2+...+10 records
	eventually(t, 5*time.Second, "HW on every replica", func() bool {
		for _, b := range bs {
			if i := info(t, b, "orders"); i.LogEndOffset != n || i.HighWatermark != n {
				return false
			}
		}
		return true
	})
	if i := info(t, bs[1], "orders"); i.IsLeader || i.Leader != 0 || i.LeaderEpoch != 1 {
		t.Errorf("follower info = %+v", i)
	}
	// A follower refuses produce and consumer fetch, naming the leader.
	_, _, err := bs[1].manager().Produce(context.Background(), "orders", 0, recordsOf("x", 1), AcksLeader, time.Second)
	var nl *NotLeaderError
	if !errors.As(err, &nl) || nl.Leader != 0 {
		t.Errorf("produce on follower: %v, want NotLeader(leader 0)", err)
	}
	_, err = bs[2].manager().Fetch(context.Background(), "orders", 0, 0, 1<<20, 0, 0)
	if !errors.As(err, &nl) || nl.Leader != 0 {
		t.Errorf("fetch on follower: %v, want NotLeader(leader 0)", err)
	}
	if _, err := bs[0].manager().Fetch(context.Background(), "nope", 0, 0, 1<<20, 0, 0); !errors.Is(err, ErrUnknownPartition) {
		t.Errorf("fetch of unknown topic: %v, want ErrUnknownPartition", err)
	}
}

func TestAcksAllWaitsForEveryISRMember(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", map[string]string{"min.insync.replicas": "2"})
	waitLeader(t, bs[0], "orders")

	for i := range 20 {
		_, last := produce(t, bs[0], "orders", recordsOf("v", 3), AcksAll)
		// When acks=all returns, every ISR member has the batch.
		for _, b := range bs {
			if leo := info(t, b, "orders").LogEndOffset; leo <= last {
				t.Fatalf("batch %d: broker %d has log end %d, batch ends at %d", i, b.id, leo, last)
			}
		}
		if hw := info(t, bs[0], "orders").HighWatermark; hw <= last {
			t.Fatalf("batch %d: HW %d does not cover %d", i, hw, last)
		}
	}

	// With a follower gone (and the lag time far away) the HW stalls and
	// acks=all times out; the batch stays in the leader's log.
	bs[2].stop(t)
	leo := info(t, bs[0], "orders").LogEndOffset
	start := time.Now()
	_, _, err := bs[0].manager().Produce(context.Background(), "orders", 0, recordsOf("late", 1), AcksAll, 300*time.Millisecond)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("produce with a dead ISR member: %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 2*time.Second {
		t.Errorf("timeout took %v", d)
	}
	if got := info(t, bs[0], "orders").LogEndOffset; got != leo+1 {
		t.Errorf("leader log end after timed-out produce = %d, want %d", got, leo+1)
	}
	// The deadline of the caller's context is honoured too.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := bs[0].manager().Produce(ctx, "orders", 0, recordsOf("late", 1), AcksAll, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("produce with a cancelled context: %v", err)
	}
}

func TestAcksAllRefusedBelowMinISR(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	bs[2].stop(t) // out of the ISR and staying out
	c.set(PartitionState{
		Topic: "orders", Partition: 0, Replicas: []int32{0, 1, 2}, Leader: 0, LeaderEpoch: 1,
		ISR: []int32{0, 1}, PartitionEpoch: 1, Config: map[string]string{"min.insync.replicas": "3"},
	})
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("a", 2), AcksLeader) // acks=1 is not affected

	before := info(t, bs[0], "orders").LogEndOffset
	_, _, err := bs[0].manager().Produce(context.Background(), "orders", 0, recordsOf("b", 2), AcksAll, time.Second)
	if !errors.Is(err, ErrNotEnoughReplicas) {
		t.Fatalf("acks=all with ISR 2 < min 3: %v, want ErrNotEnoughReplicas", err)
	}
	if after := info(t, bs[0], "orders").LogEndOffset; after != before {
		t.Errorf("refused produce wrote: log end %d -> %d", before, after)
	}
	// Lowering min.insync.replicas is a config change the leader picks up.
	c.update("orders", 0, func(s *PartitionState) { s.Config = map[string]string{"min.insync.replicas": "2"} })
	eventually(t, 5*time.Second, "acks=all to be accepted", func() bool {
		_, _, err := bs[0].manager().Produce(context.Background(), "orders", 0, recordsOf("c", 1), AcksAll, 5*time.Second)
		return err == nil
	})
}

func TestISRShrinksWhenFollowerStopsAndExpandsWhenItReturns(t *testing.T) {
	c := newMemCluster()
	lag := func(cfg *Config) { cfg.ReplicaLagTimeMax = time.Second }
	bs := startBrokers(t, c, 3, lag)
	threeReplicas(c, "orders", map[string]string{"min.insync.replicas": "2"})
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("a", 5), AcksAll)

	bs[2].stop(t)
	// acks=all started while broker 2 is still in the ISR completes once
	// the controller has committed the shrink: no sleep, no polling.
	start := time.Now()
	_, last := produce(t, bs[0], "orders", recordsOf("b", 5), AcksAll)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("acks=all took %v across the shrink", d)
	}
	if got := c.state("orders", 0).ISR; !slices.Equal(got, []int32{0, 1}) {
		t.Fatalf("controller ISR after shrink = %v, want [0 1]", got)
	}
	i := info(t, bs[0], "orders")
	if !slices.Equal(i.ISR, []int32{0, 1}) || i.HighWatermark <= last {
		t.Errorf("leader after shrink: ISR %v HW %d (batch ends %d)", i.ISR, i.HighWatermark, last)
	}
	if s := statsOf(bs[0], "orders"); s.ISRShrinks != 1 || s.ISRExpands != 0 {
		t.Errorf("shrinks/expands = %d/%d, want 1/0", s.ISRShrinks, s.ISRExpands)
	}

	// More data while it is away, then it comes back, catches up and is
	// added again.
	produce(t, bs[0], "orders", recordsOf("c", 50), AcksAll)
	bs[2].start(t)
	eventually(t, 5*time.Second, "broker 2 back in the ISR", func() bool {
		return slices.Equal(c.state("orders", 0).ISR, []int32{0, 1, 2})
	})
	eventually(t, 5*time.Second, "leader to see the expansion", func() bool {
		return len(info(t, bs[0], "orders").ISR) == 3
	})
	if s := statsOf(bs[0], "orders"); s.ISRShrinks != 1 || s.ISRExpands != 1 {
		t.Errorf("shrinks/expands = %d/%d, want 1/1", s.ISRShrinks, s.ISRExpands)
	}
	_, last = produce(t, bs[0], "orders", recordsOf("d", 1), AcksAll)
	if leo := info(t, bs[2], "orders").LogEndOffset; leo <= last {
		t.Errorf("returned follower has log end %d after acks=all of %d", leo, last)
	}
}

func statsOf(b *testBroker, topic string) PartitionStats {
	for _, s := range b.manager().Stats() {
		if s.Topic == topic {
			return s
		}
	}
	return PartitionStats{}
}

func TestDeposedLeaderTailIsDiscarded(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("committed", 5), AcksAll)

	// The followers go away; the old leader takes writes nobody copies.
	bs[1].stop(t)
	bs[2].stop(t)
	produce(t, bs[0], "orders", recordsOf("lost", 3), AcksLeader)
	if leo := info(t, bs[0], "orders").LogEndOffset; leo != 8 {
		t.Fatalf("old leader log end = %d, want 8", leo)
	}

	// The controller elects broker 1 (epoch 2); broker 0 is told to follow.
	c.update("orders", 0, func(s *PartitionState) { s.Leader = 1; s.ISR = []int32{1, 2} })
	bs[1].start(t)
	bs[2].start(t)
	waitLeader(t, bs[1], "orders")
	produce(t, bs[1], "orders", recordsOf("new", 4), AcksAll)

	eventually(t, 5*time.Second, "old leader to converge on the new leader's log", func() bool {
		i := info(t, bs[0], "orders")
		return i.LogEndOffset == 9 && i.HighWatermark == 9
	})
	want := []string{"committed-0", "committed-1", "committed-2", "committed-3", "committed-4", "new-0", "new-1", "new-2", "new-3"}
	for _, b := range bs {
		if got := values(readAll(t, b, "orders")); !slices.Equal(got, want) {
			t.Errorf("broker %d log = %v, want %v", b.id, got, want)
		}
	}
	leaderBytes := segmentBytes(t, bs[1], "orders")
	if got := segmentBytes(t, bs[0], "orders"); !bytes.Equal(got, leaderBytes) {
		t.Errorf("old leader's segment bytes differ from the new leader's (%d vs %d bytes)", len(got), len(leaderBytes))
	}
	if bytes.Contains(segmentBytes(t, bs[0], "orders"), []byte("lost-")) {
		t.Error("the unreplicated tail is still on the old leader's disk")
	}
}

func TestFollowerBehindLeaderLogStartRestartsThere(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	small := map[string]string{"segment.bytes": "1024", "retention.bytes": "2048"}
	threeReplicas(c, "orders", small)
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("early", 3), AcksAll)

	// Broker 2 stops and leaves the ISR; retention deletes what brokers 0
	// and 1 hold, which is committed, and broker 2 has not copied.
	bs[2].stop(t)
	c.update("orders", 0, func(s *PartitionState) { s.ISR = []int32{0, 1} })
	for range 100 {
		produce(t, bs[0], "orders", recordsOf("pad-pad-pad-pad-pad", 2), AcksLeader)
	}
	eventually(t, 5*time.Second, "the high watermark to reach the log end", func() bool {
		i := info(t, bs[0], "orders")
		return i.HighWatermark == i.LogEndOffset
	})
	bs[0].manager().ApplyRetention()
	lso := info(t, bs[0], "orders").LogStartOffset
	if lso <= 3 {
		t.Fatalf("leader log start after retention = %d, want past the follower's end 3", lso)
	}

	bs[2].start(t)
	eventually(t, 5*time.Second, "follower to catch up from the leader's log start", func() bool {
		i, l := info(t, bs[2], "orders"), info(t, bs[0], "orders")
		return i.LogEndOffset == l.LogEndOffset
	})
	if got := info(t, bs[2], "orders").LogStartOffset; got != lso {
		t.Errorf("follower log start = %d, want the leader's %d", got, lso)
	}
	recs := readAll(t, bs[2], "orders")
	if len(recs) == 0 || recs[0].Offset != lso {
		t.Fatalf("follower's first record: %+v, want offset %d", recs[:min(1, len(recs))], lso)
	}
}

func TestConsumersNeverSeeRecordsAboveTheHighWatermark(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("a", 4), AcksAll)

	bs[1].stop(t) // still in the ISR: the HW cannot pass what broker 1 has
	produce(t, bs[0], "orders", recordsOf("b", 6), AcksLeader)
	m := bs[0].manager()
	res, err := m.Fetch(context.Background(), "orders", 0, 0, 1<<20, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.HighWatermark != 4 || res.LogEndOffset != 10 || len(res.Records) != 4 {
		t.Fatalf("fetch: HW %d LEO %d %d records, want 4, 10, 4", res.HighWatermark, res.LogEndOffset, len(res.Records))
	}
	// At the log end there is nothing to wait for: nothing, after the
	// fetch's own wait.
	for _, wait := range []time.Duration{0, 50 * time.Millisecond} {
		res, err = m.Fetch(context.Background(), "orders", 0, 10, 1<<20, 0, wait)
		if err != nil || len(res.Records) != 0 || res.HighWatermark != 4 {
			t.Fatalf("fetch at the log end 10 (HW 4) waiting %v: %d records, HW %d, %v", wait, len(res.Records), res.HighWatermark, err)
		}
	}
	var oor *OffsetOutOfRangeError
	if _, err := m.Fetch(context.Background(), "orders", 0, 11, 1<<20, 0, 0); !errors.As(err, &oor) || oor.HighWatermark != 4 || oor.LogStartOffset != 0 {
		t.Fatalf("fetch above the log end: %v, want OffsetOutOfRange [0, 4]", err)
	}

	// At the HW and above it up to the log end the records exist but broker
	// 1, still in the ISR, lacks them: a fetch there waits for the HW, with
	// or without a wait of its own (as a new leader that has not yet learnt
	// its predecessor's HW answers a consumer that read up to there), and
	// returns nothing above it. When broker 1 returns and the HW moves, the
	// waiting consumers are woken and see the rest.
	type answer struct {
		off int64
		res FetchResult
		err error
	}
	done := make(chan answer, 3)
	for _, f := range []struct {
		off  int64
		wait time.Duration
	}{{4, 0}, {5, 50 * time.Millisecond}, {4, 10 * time.Second}} {
		go func() {
			res, err := m.Fetch(context.Background(), "orders", 0, f.off, 1<<20, 0, f.wait)
			done <- answer{f.off, res, err}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	select {
	case a := <-done:
		t.Fatalf("fetch at %d (HW 4, LEO 10) answered before the HW moved: %d records, HW %d, %v", a.off, len(a.res.Records), a.res.HighWatermark, a.err)
	default:
	}
	bs[1].start(t)
	for range 3 {
		select {
		case a := <-done:
			if a.err != nil {
				t.Fatalf("woken fetch at %d: %v", a.off, a.err)
			}
			if len(a.res.Records) == 0 || a.res.Records[0].Offset != a.off || a.res.Records[len(a.res.Records)-1].Offset >= a.res.HighWatermark {
				t.Errorf("woken fetch at %d: %d records, HW %d", a.off, len(a.res.Records), a.res.HighWatermark)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("fetches not woken by the HW moving")
		}
	}
}

func TestLongPollWakesOnAppend(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 1, nil)
	c.set(PartitionState{Topic: "solo", Partition: 0, Replicas: []int32{0}, Leader: 0, LeaderEpoch: 1, ISR: []int32{0}, PartitionEpoch: 1})
	waitLeader(t, bs[0], "solo")
	m := bs[0].manager()

	start := time.Now()
	done := make(chan FetchResult, 1)
	go func() {
		res, err := m.Fetch(context.Background(), "solo", 0, 0, 1<<20, 0, 10*time.Second)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	time.Sleep(100 * time.Millisecond)
	produce(t, bs[0], "solo", recordsOf("hello", 1), AcksLeader)
	select {
	case res := <-done:
		if got := values(res.Records); !slices.Equal(got, []string{"hello-0"}) {
			t.Errorf("long poll returned %v", got)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("long poll took %v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("long poll not woken by the append")
	}

	// Without an append it returns empty at the deadline.
	start = time.Now()
	res, err := m.Fetch(context.Background(), "solo", 0, 1, 1<<20, 0, 150*time.Millisecond)
	if err != nil || len(res.Records) != 0 || time.Since(start) < 150*time.Millisecond {
		t.Errorf("idle long poll: %d records, %v after %v", len(res.Records), err, time.Since(start))
	}
}

// A leader records its epoch's start at election, so the epoch-end request
// of a follower whose latest epoch ended there is answered with that start
// before the leader has written anything, and still after it has.
func TestNewLeaderAnswersEpochEndBeforeWriting(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("committed", 5), AcksAll)

	st := c.update("orders", 0, func(s *PartitionState) { s.Leader = 1 })
	waitLeader(t, bs[1], "orders")
	p, err := bs[1].manager().partition("orders", 0)
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		e, end, err := p.endOffsetForEpoch(st.LeaderEpoch, 1)
		if err != nil || e != 1 || end != 5 {
			t.Fatalf("%s: end of epoch 1 = (%d, %d, %v), want (1, 5)", when, e, end, err)
		}
		if e, end, err := p.endOffsetForEpoch(st.LeaderEpoch, st.LeaderEpoch); err != nil || e != st.LeaderEpoch || end != p.log.LogEndOffset() {
			t.Fatalf("%s: end of the current epoch = (%d, %d, %v), want (%d, %d)", when, e, end, err, st.LeaderEpoch, p.log.LogEndOffset())
		}
	}
	check("before writing")
	if got := p.log.LatestEpoch(); got != st.LeaderEpoch {
		t.Fatalf("new leader's log latest epoch = %d, want %d recorded at election", got, st.LeaderEpoch)
	}
	produce(t, bs[1], "orders", recordsOf("new", 3), AcksAll)
	check("after writing")

	// Brokers 0 and 2 stop; broker 1 leads a newer epoch alone and writes
	// what nobody copies. Leadership then goes back to broker 0, which
	// restarts knowing epochs 1 and 2 only. Broker 1, now a follower whose
	// latest epoch is one broker 0 never saw, learns that epoch 2 is the
	// last they share and that it ends where broker 0's epoch began, and
	// discards its tail.
	bs[0].stop(t)
	bs[2].stop(t)
	c.update("orders", 0, func(s *PartitionState) { s.Leader = 2 })
	lone := c.update("orders", 0, func(s *PartitionState) { s.Leader = 1; s.ISR = []int32{1} })
	eventually(t, 5*time.Second, "broker 1 to lead alone", func() bool {
		i := info(t, bs[1], "orders")
		return i.IsLeader && i.LeaderEpoch == lone.LeaderEpoch
	})
	produce(t, bs[1], "orders", recordsOf("lost", 2), AcksLeader)
	st = c.update("orders", 0, func(s *PartitionState) { s.Leader = 0; s.ISR = []int32{0} })
	bs[0].start(t)
	waitLeader(t, bs[0], "orders")
	p0, err := bs[0].manager().partition("orders", 0)
	if err != nil {
		t.Fatal(err)
	}
	if e, end, err := p0.endOffsetForEpoch(st.LeaderEpoch, lone.LeaderEpoch); err != nil || e != 2 || end != 8 {
		t.Fatalf("end of epoch %d on the leader of epoch %d = (%d, %d, %v), want (2, 8)", lone.LeaderEpoch, st.LeaderEpoch, e, end, err)
	}
	eventually(t, 5*time.Second, "broker 1 to drop its tail", func() bool {
		return info(t, bs[1], "orders").LogEndOffset == 8
	})
	if got := values(readAll(t, bs[1], "orders")); slices.Contains(got, "lost-0") {
		t.Fatalf("broker 1 kept its unreplicated tail: %v", got)
	}
}
