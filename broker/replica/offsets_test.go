package replica

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/storage"
)

func TestDeleteRecordsMovesTheLogStartOnEveryReplica(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", map[string]string{"segment.bytes": "1024"})
	waitLeader(t, bs[0], "orders")
	for range 10 {
		produce(t, bs[0], "orders", recordsOf("padding-padding-padding", 5), AcksAll)
	}
	m := bs[0].manager()
	segments := func(b *testBroker) int {
		p, err := b.manager().partition("orders", 0)
		if err != nil {
			t.Fatal(err)
		}
		return p.log.SegmentCount()
	}
	before := segments(bs[0])

	var oor *OffsetOutOfRangeError
	if _, err := m.DeleteRecords("orders", 0, 51); !errors.As(err, &oor) || oor.HighWatermark != 50 {
		t.Fatalf("DeleteRecords above the high watermark: %v", err)
	}
	var nl *NotLeaderError
	if _, err := bs[1].manager().DeleteRecords("orders", 0, 10); !errors.As(err, &nl) || nl.Leader != 0 {
		t.Fatalf("DeleteRecords on a follower: %v", err)
	}
	lso, err := m.DeleteRecords("orders", 0, 27)
	if err != nil || lso != 27 {
		t.Fatalf("DeleteRecords(27) = %d, %v", lso, err)
	}
	if lso, err := m.DeleteRecords("orders", 0, 3); err != nil || lso != 27 {
		t.Fatalf("DeleteRecords below the log start = %d, %v; want 27 unchanged", lso, err)
	}
	if after := segments(bs[0]); after >= before {
		t.Errorf("segments before and after deleting: %d, %d", before, after)
	}
	if _, err := m.Fetch(t.Context(), "orders", 0, 26, 1<<20, 0, 0); !errors.As(err, &oor) || oor.LogStartOffset != 27 {
		t.Fatalf("fetch below the new log start: %v", err)
	}
	res, err := m.Fetch(t.Context(), "orders", 0, 27, 1<<20, 0, 0)
	if err != nil || len(res.Records) != 23 || res.Records[0].Offset != 27 || res.LogStartOffset != 27 {
		t.Fatalf("fetch from the new log start: %d records, log start %d, %v", len(res.Records), res.LogStartOffset, err)
	}

	// The followers take the log start with their next fetch, and a new
	// leader keeps it.
	produce(t, bs[0], "orders", recordsOf("after", 1), AcksAll)
	for _, b := range bs[1:] {
		eventually(t, 5*time.Second, fmt.Sprintf("broker %d to follow the log start", b.id), func() bool {
			return info(t, b, "orders").LogStartOffset == 27
		})
	}
	c.update("orders", 0, func(s *PartitionState) { s.Leader = 1 })
	waitLeader(t, bs[1], "orders")
	res, err = bs[1].manager().Fetch(t.Context(), "orders", 0, 27, 1<<20, 0, 0)
	if err != nil || len(res.Records) == 0 || res.Records[0].Offset != 27 || res.LogStartOffset != 27 {
		t.Fatalf("new leader: fetch from 27 = %d records, log start %d, %v", len(res.Records), res.LogStartOffset, err)
	}
}

func TestOffsetForTimestampStopsAtTheHighWatermark(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", map[string]string{"segment.bytes": "1024"})
	waitLeader(t, bs[0], "orders")
	const base = 1_700_000_000_000
	for i := range 40 {
		// Two records per batch, timestamps 10 ms apart.
		recs := []storage.Record{
			{Timestamp: base + int64(20*i), Value: []byte("a")},
			{Timestamp: base + int64(20*i+10), Value: []byte("b")},
		}
		produce(t, bs[0], "orders", recs, AcksAll)
	}
	m := bs[0].manager()
	for _, tc := range []struct {
		ts   int64
		want int64
	}{
		{0, 0},
		{base, 0},
		{base + 10, 1},
		{base + 15, 2},
		{base + 555, 56},
		{base + 790, 79},
		{base + 791, 80}, // after every record: the high watermark
	} {
		if got, err := m.OffsetForTimestamp("orders", 0, tc.ts); err != nil || got != tc.want {
			t.Errorf("OffsetForTimestamp(base+%d) = %d, %v; want %d", tc.ts-base, got, err, tc.want)
		}
	}

	// A record nobody else has is above the high watermark: not an answer.
	bs[1].stop(t)
	bs[2].stop(t)
	produce(t, bs[0], "orders", []storage.Record{{Timestamp: base + 5000, Value: []byte("late")}}, AcksLeader)
	if got, err := m.OffsetForTimestamp("orders", 0, base+4000); err != nil || got != 80 {
		t.Errorf("OffsetForTimestamp past the high watermark = %d, %v; want 80", got, err)
	}
	var nl *NotLeaderError
	bs[1].start(t)
	if _, err := bs[1].manager().OffsetForTimestamp("orders", 0, base); !errors.As(err, &nl) {
		t.Errorf("OffsetForTimestamp on a follower: %v", err)
	}
}

// A record written with an old timestamp is past retention.ms the moment it
// is written. Retention on the leader still keeps it until every in-sync
// replica holds it (it is below the high watermark): deleted earlier, the
// followers would restart past it, the high watermark would pass it, and
// the pending acks=all produce would succeed for a record no replica has.
func TestRetentionKeepsWhatTheFollowersHaveNotCopied(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", map[string]string{"retention.ms": "3600000", "segment.bytes": "1024"})
	waitLeader(t, bs[0], "orders")
	twoDaysAgo := time.Now().Add(-48 * time.Hour).UnixMilli()
	committed := recordsOf("committed", 3)
	for i := range committed {
		committed[i].Timestamp = twoDaysAgo
	}
	produce(t, bs[0], "orders", committed, AcksAll)

	bs[1].stop(t)
	bs[2].stop(t)
	old := storage.Record{Value: []byte("old"), Timestamp: twoDaysAgo}
	type result struct {
		base int64
		err  error
	}
	done := make(chan result, 1)
	go func() {
		base, _, err := bs[0].manager().Produce(context.Background(), "orders", 0, []storage.Record{old}, AcksAll, 20*time.Second)
		done <- result{base, err}
	}()
	eventually(t, 5*time.Second, "the old record in the leader's log", func() bool {
		return info(t, bs[0], "orders").LogEndOffset == 4
	})
	bs[0].manager().ApplyRetention()
	i := info(t, bs[0], "orders")
	if i.LogStartOffset > i.HighWatermark || i.LogStartOffset > 3 {
		t.Fatalf("after retention with the followers away: log start %d, high watermark %d; want the log start at most 3", i.LogStartOffset, i.HighWatermark)
	}

	bs[1].start(t)
	bs[2].start(t)
	r := <-done
	if r.err != nil || r.base != 3 {
		t.Fatalf("acks=all produce of the old record = offset %d, %v; want 3", r.base, r.err)
	}
	for _, b := range bs {
		eventually(t, 5*time.Second, fmt.Sprintf("broker %d to hold offset 3", b.id), func() bool {
			return info(t, b, "orders").LogEndOffset == 4
		})
		recs := readAll(t, b, "orders")
		if len(recs) == 0 || recs[len(recs)-1].Offset != 3 || string(recs[len(recs)-1].Value) != "old" {
			t.Errorf("broker %d's log does not end with the acknowledged record at offset 3: %v", b.id, values(recs))
		}
	}
}

// TestDeleteRecordsInSyncWaitsForTheFollowers: a client's DeleteRecords
// answers only once every in-sync follower has moved its log start too,
// so no leader elected afterwards can serve the deleted records; in a new
// leadership, whose leader knows nothing yet of its followers' log
// starts, they are told it again and confirm it.
func TestDeleteRecordsInSyncWaitsForTheFollowers(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("r", 20), AcksAll)
	m := bs[0].manager()
	followersAt := func(want int64) {
		t.Helper()
		for _, b := range bs[1:] {
			if got := info(t, b, "orders").LogStartOffset; got != want {
				t.Fatalf("broker %d's log start right after DeleteRecordsInSync: %d, want %d", b.id, got, want)
			}
		}
	}
	lso, err := m.DeleteRecordsInSync(t.Context(), "orders", 0, 12, 10*time.Second)
	if err != nil || lso != 12 {
		t.Fatalf("DeleteRecordsInSync(12) = %d, %v", lso, err)
	}
	followersAt(12)

	// The same leader in a new epoch: its followers' sessions still hold
	// the partition, and were told 12 in the previous one.
	c.update("orders", 0, func(s *PartitionState) { s.LeaderEpoch++ })
	eventually(t, 5*time.Second, "the new epoch", func() bool { return info(t, bs[0], "orders").LeaderEpoch == 2 })
	for _, offset := range []int64{12, 15} {
		lso, err := m.DeleteRecordsInSync(t.Context(), "orders", 0, offset, 5*time.Second)
		if err != nil || lso != offset {
			t.Fatalf("DeleteRecordsInSync(%d) in the new epoch = %d, %v", offset, lso, err)
		}
		followersAt(offset)
	}
}

// TestDeleteRecordsEndsTheFollowersWait: a follower's fetch parked on the
// leader is answered as soon as the log start moves, so DeleteRecords
// does not wait out the followers' fetch wait (5 s here) for them to
// confirm it.
func TestDeleteRecordsEndsTheFollowersWait(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, func(cfg *Config) { cfg.FetchWait = 5 * time.Second })
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("r", 20), AcksAll)
	time.Sleep(100 * time.Millisecond) // the followers' fetches park
	lso, err := bs[0].manager().DeleteRecordsInSync(t.Context(), "orders", 0, 7, 2*time.Second)
	if err != nil || lso != 7 {
		t.Fatalf("DeleteRecordsInSync(7) with the followers parked for 5 s = %d, %v; want 7 within 2 s", lso, err)
	}
}
