package storage

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// produced is an idempotent append: n records of producer id in epoch,
// the first with sequence seq.
type produced struct {
	id    int64
	epoch int16
	seq   int32
	n     int
}

func (p produced) append(l *Log) (AppendResult, error) {
	recs := make([]Record, p.n)
	for i := range recs {
		recs[i].Value = fmt.Appendf(nil, "p%d-e%d-s%d", p.id, p.epoch, int64(p.seq)+int64(i))
	}
	return l.AppendRecords(recs, 0, BatchOptions{Producer: &Producer{ID: p.id, Epoch: p.epoch, BaseSequence: p.seq}})
}

// appendStep is one append and what it must give: the offsets, whether it is
// a duplicate, or the error.
type appendStep struct {
	produced
	base, last int64
	dup        bool
	err        error
}

func runSteps(t *testing.T, l *Log, steps []appendStep) {
	t.Helper()
	for i, s := range steps {
		end := l.LogEndOffset()
		res, err := s.append(l)
		if !errors.Is(err, s.err) || (s.err != nil && err == nil) {
			t.Fatalf("step %d %+v: error %v, want %v", i, s.produced, err, s.err)
		}
		if s.err != nil {
			if l.LogEndOffset() != end {
				t.Fatalf("step %d %+v: refused, but the log grew from %d to %d", i, s.produced, end, l.LogEndOffset())
			}
			continue
		}
		if res.BaseOffset != s.base || res.LastOffset != s.last || res.Duplicate != s.dup {
			t.Fatalf("step %d %+v: %+v, want offsets %d-%d duplicate %v", i, s.produced, res, s.base, s.last, s.dup)
		}
		if s.dup && l.LogEndOffset() != end {
			t.Fatalf("step %d %+v: a duplicate grew the log from %d to %d", i, s.produced, end, l.LogEndOffset())
		}
	}
}

func TestIdempotentAppend(t *testing.T) {
	steps := []appendStep{
		{produced: produced{1, 0, 0, 3}, base: 0, last: 2},
		{produced: produced{1, 0, 0, 3}, base: 0, last: 2, dup: true},        // a retry
		{produced: produced{1, 0, 3, 2}, base: 3, last: 4},                   // the next batch
		{produced: produced{1, 0, 6, 1}, err: ErrOutOfOrderSequence},         // a gap
		{produced: produced{1, 0, 4, 1}, err: ErrOutOfOrderSequence},         // overlaps, not a batch sent
		{produced: produced{1, 0, 3, 2}, base: 3, last: 4, dup: true},        // the latest again
		{produced: produced{2, 0, 42, 1}, base: 5, last: 5},                  // a producer the log does not know may start anywhere
		{produced: produced{1, 0, 5, 1}, base: 6, last: 6},                   // producers are independent
		{produced: produced{1, 0, 6, 1}, base: 7, last: 7},                   //
		{produced: produced{1, 0, 7, 1}, base: 8, last: 8},                   //
		{produced: produced{1, 0, 0, 3}, base: 0, last: 2, dup: true},        // still among the last five
		{produced: produced{1, 0, 8, 1}, base: 9, last: 9},                   // pushes the first batch out
		{produced: produced{1, 0, 0, 3}, err: ErrOutOfOrderSequence},         // no longer known
		{produced: produced{1, 1, 3, 1}, err: ErrOutOfOrderSequence},         // a new epoch starts at 0
		{produced: produced{1, 1, 0, 2}, base: 10, last: 11},                 // it does
		{produced: produced{1, 0, 9, 1}, err: ErrInvalidProducerEpoch},       // the old epoch is fenced
		{produced: produced{1, 0, 8, 1}, err: ErrInvalidProducerEpoch},       // even for its retries
		{produced: produced{1, 1, 0, 2}, base: 10, last: 11, dup: true},      //
		{produced: produced{3, 0, math.MaxInt32 - 1, 3}, base: 12, last: 14}, // wraps: sequences MaxInt32-1, MaxInt32, 0
		{produced: produced{3, 0, 1, 1}, base: 15, last: 15},                 // continues after 0
		{produced: produced{3, 0, math.MaxInt32 - 1, 3}, base: 12, last: 14, dup: true},
		{produced: produced{4, -1, 0, 1}, err: ErrInvalidProducer},
		{produced: produced{4, 0, -1, 1}, err: ErrInvalidProducer},
	}
	l := mustOpen(t, t.TempDir(), smallConfig())
	defer l.Close()
	runSteps(t, l, steps)
	// Every record written once, in order.
	got := readAll(t, l)
	if len(got) != 16 || string(got[0].Value) != "p1-e0-s0" || string(got[12].Value) != fmt.Sprintf("p3-e0-s%d", math.MaxInt32-1) {
		t.Fatalf("%d records: %q … %q", len(got), got[0].Value, got[len(got)-1].Value)
	}
	ps := l.Producers()
	if len(ps) != 3 || ps[0].ID != 1 || ps[0].Epoch != 1 || ps[0].LastSeq != 1 || ps[0].LastOffset != 11 || ps[2].LastSeq != 1 {
		t.Fatalf("producers %+v", ps)
	}
}

// appendProducer appends batches of n records of producer id from
// sequence seq on, one batch per entry of sizes.
func appendProducer(t *testing.T, l *Log, id int64, seq int32, sizes ...int) int32 {
	t.Helper()
	for _, n := range sizes {
		if _, err := (produced{id, 0, seq, n}).append(l); err != nil {
			t.Fatalf("producer %d sequence %d: %v", id, seq, err)
		}
		seq += int32(n)
	}
	return seq
}

// checkRetries checks that the last five batches of producer id, ending
// at sequence next-1, are duplicates and that the next one is appended.
func checkRetries(t *testing.T, l *Log, id int64, batches []produced, next int32) {
	t.Helper()
	for _, b := range batches[max(len(batches)-5, 0):] {
		end := l.LogEndOffset()
		res, err := b.append(l)
		if err != nil || !res.Duplicate || l.LogEndOffset() != end {
			t.Fatalf("retry of %+v: %+v, %v; log end %d → %d", b, res, err, end, l.LogEndOffset())
		}
	}
	if res, err := (produced{id, 0, next, 1}).append(l); err != nil || res.Duplicate {
		t.Fatalf("next batch at sequence %d: %+v, %v", next, res, err)
	}
}

// history appends batches of producer 7 across several segments and
// returns them.
func history(t *testing.T, l *Log) []produced {
	t.Helper()
	var out []produced
	seq := int32(0)
	for i := range 60 {
		p := produced{7, 0, seq, 1 + i%4}
		if _, err := p.append(l); err != nil {
			t.Fatal(err)
		}
		// Another producer in between, so that offsets and sequences differ.
		appendProducer(t, l, 100+int64(i%3), int32(i/3), 1)
		out = append(out, p)
		seq += int32(p.n)
	}
	if l.SegmentCount() < 3 {
		t.Fatalf("only %d segments", l.SegmentCount())
	}
	return out
}

func nextSeq(batches []produced) int32 {
	b := batches[len(batches)-1]
	return b.seq + int32(b.n)
}

// TestProducerStateSurvivesRestart: after a clean close (from the
// snapshot at the log end) and after a crash (from the snapshot at the
// last roll and the log after it), the last five batches are still
// recognised, and a follower that copied the log recognises them too.
func TestProducerStateSurvivesRestart(t *testing.T) {
	cfg := smallConfig()
	cfg.SegmentBytes = 2048
	for _, how := range []string{"close", "crash", "no snapshots", "follower"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			l := mustOpen(t, dir, cfg)
			batches := history(t, l)
			switch how {
			case "close":
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(snapshotPath(dir, 60+nextSeqTotal(batches))); err != nil {
					t.Fatalf("no snapshot at the log end after Close: %v", err)
				}
				l = mustOpen(t, dir, cfg)
			case "crash":
				crash(l)
				l = mustOpen(t, dir, cfg)
			case "no snapshots":
				crash(l)
				if err := removeSnapshots(dir, func(int64) bool { return true }); err != nil {
					t.Fatal(err)
				}
				l = mustOpen(t, dir, cfg)
			case "follower":
				raw, err := l.ReadRaw(0, -1, 0)
				if err != nil {
					t.Fatal(err)
				}
				l.Close()
				l = mustOpen(t, t.TempDir(), cfg)
				if _, err := l.AppendRaw(raw); err != nil {
					t.Fatal(err)
				}
			}
			defer l.Close()
			checkRetries(t, l, 7, batches, nextSeq(batches))
		})
	}
}

// nextSeqTotal is the number of records of producer 7 in history.
func nextSeqTotal(batches []produced) int64 { return int64(nextSeq(batches)) }

// TestProducerStateAfterTornTail: a crash tears the last batch; the
// producer's retry of it is appended (it is not in the log), the batches
// before it are still duplicates.
func TestProducerStateAfterTornTail(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, smallConfig())
	seq := appendProducer(t, l, 5, 0, 2, 3, 1)
	last := produced{5, 0, seq, 4}
	if _, err := last.append(l); err != nil {
		t.Fatal(err)
	}
	crash(l)
	path := lastLog(t, dir)
	bs := batchesIn(t, path)
	if err := os.Truncate(path, bs[len(bs)-1].pos+bs[len(bs)-1].size-5); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, dir, smallConfig())
	defer l.Close()
	if l.LogEndOffset() != 6 {
		t.Fatalf("log end %d after the torn batch, want 6", l.LogEndOffset())
	}
	runSteps(t, l, []appendStep{
		{produced: produced{5, 0, 5, 1}, base: 5, last: 5, dup: true},
		{produced: last, base: 6, last: 9},
		{produced: last, base: 6, last: 9, dup: true},
	})
}

// TestProducerStateCrashBetweenSnapshotAndSegments: a roll wrote its
// snapshot, but the batches before it never reached the disk (the crash
// came before the fsync). The snapshot describes batches the log no
// longer holds and must not be believed: retries of the lost batches are
// appended again, retries of the surviving ones are duplicates.
func TestProducerStateCrashBetweenSnapshotAndSegments(t *testing.T) {
	cfg := smallConfig()
	cfg.SegmentBytes = 2048
	dir := t.TempDir()
	l := mustOpen(t, dir, cfg)
	batches := history(t, l)
	crash(l)
	logs := segmentFiles(t, dir, logSuffix)
	// Lose the active segment and the tail of the one before it, as an
	// unsynced page cache would; the snapshot at the active segment's base
	// (written at the roll) stays.
	active := logs[len(logs)-1]
	var base int64
	fmt.Sscanf(filepath.Base(active), "%020d", &base)
	if _, err := os.Stat(snapshotPath(dir, base)); err != nil {
		t.Fatalf("no snapshot at the last roll (%d): %v", base, err)
	}
	prev := logs[len(logs)-2]
	bs := batchesIn(t, prev)
	cut := bs[len(bs)-3]
	for _, p := range []string{active, sibling(active, indexSuffix), sibling(active, timeIndexSuffix)} {
		os.Remove(p)
	}
	if err := os.Truncate(prev, cut.pos); err != nil {
		t.Fatal(err)
	}
	// From here on segments do not roll, so the log end passes base in the
	// segment that held it.
	cfg.SegmentBytes = 1 << 20
	l = mustOpen(t, dir, cfg)
	if l.LogEndOffset() != cut.base {
		t.Fatalf("log end %d, want %d", l.LogEndOffset(), cut.base)
	}
	if _, err := os.Stat(snapshotPath(dir, base)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the snapshot past the log end is still there: %v", err)
	}
	// The batches of producer 7 that survived: those whose last offset is
	// below the new log end.
	var kept []produced
	l2 := readAll(t, l)
	have := map[string]bool{}
	for _, r := range l2 {
		have[string(r.Value)] = true
	}
	for _, b := range batches {
		if have[fmt.Sprintf("p7-e0-s%d", int64(b.seq)+int64(b.n)-1)] {
			kept = append(kept, b)
		}
	}
	if len(kept) == len(batches) || len(kept) < 5 {
		t.Fatalf("%d of %d batches kept: the damage should lose some", len(kept), len(batches))
	}
	checkRetries(t, l, 7, kept, nextSeq(kept))
	// Other producers write the log past the offset of the dropped
	// snapshot, in the same segment; had it stayed, the next Open would
	// take it for the latest and believe producer 7's lost batches.
	segs := l.SegmentCount()
	for seq := int32(0); l.LogEndOffset() <= base; seq++ {
		appendProducer(t, l, 200, seq, 1)
	}
	if l.SegmentCount() != segs {
		t.Fatalf("the log rolled (%d → %d segments) before passing offset %d", segs, l.SegmentCount(), base)
	}
	crash(l)
	l = mustOpen(t, dir, cfg)
	defer l.Close()
	kept = append(kept, produced{7, 0, nextSeq(kept), 1})
	checkRetries(t, l, 7, kept, nextSeq(kept))
}

// TestProducerStateAfterTruncation: a follower truncating its log
// forgets the producers' batches past the cut, also across a restart
// that finds snapshots taken before the cut.
func TestProducerStateAfterTruncation(t *testing.T) {
	cfg := smallConfig()
	cfg.SegmentBytes = 2048
	dir := t.TempDir()
	l := mustOpen(t, dir, cfg)
	batches := history(t, l)
	// Cut in the middle of the history; the producer's retries of the
	// batches past the cut are new again.
	cutAt := l.LogEndOffset() / 2
	if err := l.Truncate(cutAt); err != nil {
		t.Fatal(err)
	}
	var kept []produced
	for _, r := range readAll(t, l) {
		for _, b := range batches {
			if string(r.Value) == fmt.Sprintf("p7-e0-s%d", int64(b.seq)+int64(b.n)-1) {
				kept = append(kept, b)
			}
		}
	}
	check := func(l *Log) {
		t.Helper()
		for _, b := range kept[len(kept)-5:] {
			if res, err := b.append(l); err != nil || !res.Duplicate {
				t.Fatalf("retry of kept %+v: %+v, %v", b, res, err)
			}
		}
	}
	check(l)
	// A lost batch comes again from the new leader with the same sequence:
	// it is appended, not taken for a duplicate.
	lost := batches[len(kept)]
	if res, err := lost.append(l); err != nil || res.Duplicate {
		t.Fatalf("the first lost batch again: %+v, %v", res, err)
	}
	crash(l)
	l = mustOpen(t, dir, cfg)
	defer l.Close()
	for _, b := range append(kept[len(kept)-4:], lost) {
		if res, err := b.append(l); err != nil || !res.Duplicate {
			t.Fatalf("retry of %+v after a restart: %+v, %v", b, res, err)
		}
	}
}

// TestProducerSnapshotDamage: a damaged or torn snapshot is deleted and
// the state comes from the log instead.
func TestProducerSnapshotDamage(t *testing.T) {
	for name, damage := range map[string]func(path string) error{
		"torn":      func(p string) error { return os.Truncate(p, 20) },
		"empty":     func(p string) error { return os.Truncate(p, 0) },
		"bit flip":  func(p string) error { b, _ := os.ReadFile(p); b[len(b)/2] ^= 4; return os.WriteFile(p, b, 0o644) },
		"not there": os.Remove,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			l := mustOpen(t, dir, smallConfig())
			var batches []produced
			seq := int32(0)
			for i := range 8 {
				b := produced{9, 0, seq, i%3 + 1}
				if _, err := b.append(l); err != nil {
					t.Fatal(err)
				}
				batches = append(batches, b)
				seq += int32(b.n)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if err := damage(snapshotPath(dir, l.LogEndOffset())); err != nil {
				t.Fatal(err)
			}
			l = mustOpen(t, dir, smallConfig())
			defer l.Close()
			checkRetries(t, l, 9, batches, seq)
		})
	}
}

// TestProducerExpiry: a producer idle for producer.id.expiration.ms is
// forgotten; idleness counts from the broker's clock for the appends it
// saw and from the batches' timestamps for state rebuilt from the log.
func TestProducerExpiry(t *testing.T) {
	ps := newProducerState()
	now := time.Now()
	ps.update(BatchHeader{ProducerID: 1, BaseOffset: 0}, now.Add(-25*time.Hour).UnixMilli())
	ps.update(BatchHeader{ProducerID: 2, BaseOffset: 1}, now.Add(-23*time.Hour).UnixMilli())
	ps.expire(now, 24*time.Hour)
	if got := ps.list(); len(got) != 1 || got[0].ID != 2 {
		t.Fatalf("after expiry: %+v", got)
	}

	dir := t.TempDir()
	l := mustOpen(t, dir, smallConfig())
	old := time.Now().Add(-48 * time.Hour).UnixMilli()
	for id, ts := range map[int64]int64{1: old, 2: 0} {
		recs := []Record{{Timestamp: ts, Value: []byte("v")}}
		if _, err := l.AppendRecords(recs, 0, BatchOptions{Producer: &Producer{ID: id}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.Producers(); len(got) != 2 {
		t.Fatalf("both producers just appended: %+v", got)
	}
	crash(l)
	if err := removeSnapshots(dir, func(int64) bool { return true }); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, dir, smallConfig())
	defer l.Close()
	if got := l.Producers(); len(got) != 1 || got[0].ID != 2 {
		t.Fatalf("rebuilt from the log: %+v; producer 1's batch is two days old", got)
	}
	// The forgotten producer's retry is a new batch: where the guarantee
	// ends.
	res, err := l.AppendRecords([]Record{{Timestamp: old, Value: []byte("v")}}, 0, BatchOptions{Producer: &Producer{ID: 1}})
	if err != nil || res.Duplicate {
		t.Fatalf("retry of an expired producer: %+v, %v", res, err)
	}
}

// TestProducersBounded: past MaxProducers the longest idle producers are
// forgotten, a tenth at a time, so a flood of producer ids cannot grow a
// partition's memory without bound.
func TestProducersBounded(t *testing.T) {
	cfg := smallConfig()
	cfg.MaxProducers = 100
	l := mustOpen(t, t.TempDir(), cfg)
	defer l.Close()
	for id := range int64(1000) {
		appendProducer(t, l, id, 0, 1)
	}
	ps := l.Producers()
	if len(ps) > 100 || len(ps) < 90 {
		t.Fatalf("%d producers remembered, limit 100", len(ps))
	}
	if ps[len(ps)-1].ID != 999 {
		t.Fatalf("the latest producer was forgotten: %+v", ps[len(ps)-1])
	}
}

func TestLastSequence(t *testing.T) {
	for _, c := range []struct{ base, delta, want int32 }{
		{0, 0, 0}, {5, 3, 8}, {math.MaxInt32, 0, math.MaxInt32}, {math.MaxInt32, 1, 0},
		{math.MaxInt32 - 1, 3, 1}, {math.MaxInt32 - 5, 5, math.MaxInt32},
	} {
		if got := lastSequence(c.base, c.delta); got != c.want {
			t.Errorf("lastSequence(%d, %d) = %d, want %d", c.base, c.delta, got, c.want)
		}
	}
	if !inSequence(math.MaxInt32, 0) || !inSequence(4, 5) || inSequence(4, 6) || inSequence(0, 0) {
		t.Error("inSequence")
	}
}
