package storage

import (
	"errors"
	"testing"
	"time"
)

// tsLog makes records whose timestamp is their offset plus one, in seconds.
func tsLog(t *testing.T, dir string, cfg Config, n int64) *Log {
	t.Helper()
	l := mustOpen(t, dir, cfg)
	for o := int64(0); o < n; o += 4 {
		var rs []Record
		for i := o; i < min(o+4, n); i++ {
			r := rec(i)
			r.Timestamp = (i + 1) * 1000
			rs = append(rs, r)
		}
		if _, _, err := l.Append(rs, int32(o/100)); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

func TestRetentionMs(t *testing.T) {
	dir := t.TempDir()
	cfg := smallConfig()
	cfg.RetentionMs = 100 * time.Second
	l := tsLog(t, dir, cfg, 400)
	segs := l.SegmentCount()
	wantStart := l.segs[l.segmentFor(149)].base
	// At t=250s every record older than 150s has expired: segments whose
	// newest record is below offset 149 go.
	n, err := l.ApplyRetention(time.UnixMilli(250_000), l.LogEndOffset())
	if err != nil || n == 0 {
		t.Fatalf("ApplyRetention = %d, %v", n, err)
	}
	start := l.LogStartOffset()
	if start != wantStart || l.SegmentCount() != segs-n {
		t.Fatalf("log start %d after deleting %d of %d segments", start, n, segs)
	}
	if _, err := l.Read(start-1, -1, 0, 0); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("Read below the log start: %v", err)
	}
	got, err := l.Read(start, -1, 0, 0)
	if err != nil || got[0].Offset != start {
		t.Fatalf("Read(%d): %v", start, err)
	}
	if e, end := l.EndOffsetForEpoch(1); e != 1 || end != 200 {
		t.Fatalf("EndOffsetForEpoch(1) = %d, %d", e, end)
	}
	if l.epochs.entries[0].StartOffset != start {
		t.Fatalf("epoch cache starts at %d, log at %d", l.epochs.entries[0].StartOffset, start)
	}
	// Nothing more to do at the same time.
	if n, _ := l.ApplyRetention(time.UnixMilli(250_000), l.LogEndOffset()); n != 0 {
		t.Fatalf("second pass deleted %d", n)
	}
	l.Close()
	l = mustOpen(t, dir, cfg)
	if l.LogStartOffset() != start {
		t.Fatalf("log start %d after restart, want %d", l.LogStartOffset(), start)
	}
	// Everything expired: the active segment goes too, after a roll.
	n, err = l.ApplyRetention(time.UnixMilli(1_000_000), l.LogEndOffset())
	if err != nil || l.LogStartOffset() != 400 || l.LogEndOffset() != 400 || l.Size() != 0 || l.SegmentCount() != 1 {
		t.Fatalf("all expired: %d, %v, start %d end %d size %d", n, err, l.LogStartOffset(), l.LogEndOffset(), l.Size())
	}
	if l.LatestEpoch() != 3 {
		t.Fatalf("latest epoch %d after deleting every record", l.LatestEpoch())
	}
	appendRange(t, l, 400, 410, 5, 3)
	crash(l)
	l = mustOpen(t, dir, cfg)
	defer l.Close()
	got, err = l.Read(400, -1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, 400, 410)
}

func TestRetentionBytes(t *testing.T) {
	dir := t.TempDir()
	cfg := smallConfig()
	cfg.RetentionBytes = 10 << 10
	l := mustOpen(t, dir, cfg)
	defer l.Close()
	appendRange(t, l, 0, 600, 4, 0)
	before := l.Size()
	n, err := l.ApplyRetention(time.Now(), l.LogEndOffset())
	if err != nil || n == 0 {
		t.Fatalf("ApplyRetention = %d, %v", n, err)
	}
	if l.Size() < cfg.RetentionBytes || l.Size()-l.segs[0].size.Load() >= cfg.RetentionBytes {
		t.Fatalf("size %d → %d with retention.bytes %d", before, l.Size(), cfg.RetentionBytes)
	}
	if l.LogStartOffset() != l.segs[0].base {
		t.Fatalf("log start %d, first segment %d", l.LogStartOffset(), l.segs[0].base)
	}
	checkRecords(t, readAll(t, l), l.LogStartOffset(), 600)
	// Retention never deletes the active segment by size.
	l.SetConfig(Config{SegmentBytes: cfg.SegmentBytes, RetentionBytes: 1})
	l.ApplyRetention(time.Now(), l.LogEndOffset())
	if l.SegmentCount() != 1 || l.LogEndOffset() != 600 || l.LogStartOffset() != l.segs[0].base {
		t.Fatalf("segments %d end %d", l.SegmentCount(), l.LogEndOffset())
	}
}

// Retention deletes only segments wholly below the high watermark,
// however old their records or however far over retention.bytes, so the
// log start never passes it; the log end segment goes (after a roll) only
// once the high watermark has reached the log end.
func TestRetentionStopsAtTheHighWatermark(t *testing.T) {
	cfg := smallConfig()
	cfg.RetentionMs = time.Second
	cfg.RetentionBytes = 1
	l := tsLog(t, t.TempDir(), cfg, 400)
	defer l.Close()
	later := time.UnixMilli(10_000_000) // every record expired long ago
	segs := l.SegmentCount()
	if n, err := l.ApplyRetention(later, 0); err != nil || n != 0 || l.LogStartOffset() != 0 {
		t.Fatalf("high watermark 0: deleted %d segments (%v), log start %d; want none", n, err, l.LogStartOffset())
	}
	hw := int64(150)
	n, err := l.ApplyRetention(later, hw)
	if err != nil || n == 0 {
		t.Fatalf("ApplyRetention below %d = %d, %v", hw, n, err)
	}
	first := l.segs[0]
	if start := l.LogStartOffset(); start > hw || start != first.base || first.next.Load() <= hw {
		t.Fatalf("high watermark %d: log start %d, first segment [%d, %d); want the segment holding %d first",
			hw, start, first.base, first.next.Load(), hw)
	}
	if l.SegmentCount() != segs-n {
		t.Fatalf("%d segments left of %d after deleting %d", l.SegmentCount(), segs, n)
	}
	if recs := readAll(t, l); len(recs) != int(400-l.LogStartOffset()) || recs[0].Offset != l.LogStartOffset() {
		t.Fatalf("%d records from offset %d left, want every one from the log start %d", len(recs), recs[0].Offset, l.LogStartOffset())
	}
	// One below the log end keeps the last segment and its records.
	if _, err := l.ApplyRetention(later, 399); err != nil || l.LogStartOffset() > 399 || l.Size() == 0 {
		t.Fatalf("high watermark 399: %v, log start %d, size %d", err, l.LogStartOffset(), l.Size())
	}
	if _, err := l.ApplyRetention(later, 400); err != nil || l.LogStartOffset() != 400 || l.Size() != 0 || l.LogEndOffset() != 400 {
		t.Fatalf("high watermark at the log end: %v, log start %d, size %d, log end %d",
			err, l.LogStartOffset(), l.Size(), l.LogEndOffset())
	}
}

func TestDeleteRecordsBefore(t *testing.T) {
	dir := t.TempDir()
	l := epochLog(t, dir)
	segs := l.SegmentCount()
	if err := l.DeleteRecordsBefore(77); err != nil {
		t.Fatal(err)
	}
	check := func(l *Log) {
		t.Helper()
		if l.LogStartOffset() != 77 {
			t.Fatalf("log start %d", l.LogStartOffset())
		}
		if _, err := l.Read(76, -1, 0, 0); !errors.Is(err, ErrOffsetOutOfRange) {
			t.Fatalf("Read(76): %v", err)
		}
		checkRecords(t, readAll(t, l), 77, 150)
		if e, end := l.EndOffsetForEpoch(1); e != 1 || end != 77 {
			// Epoch 1 is gone; Kafka answers with the first known start.
			t.Fatalf("EndOffsetForEpoch(1) = %d, %d", e, end)
		}
		if e, end := l.EndOffsetForEpoch(2); e != 2 || end != 100 {
			t.Fatalf("EndOffsetForEpoch(2) = %d, %d", e, end)
		}
	}
	check(l)
	if l.SegmentCount() >= segs {
		t.Fatal("no whole segment deleted")
	}
	if err := l.DeleteRecordsBefore(10); err != nil {
		t.Fatal(err)
	}
	var oor *OffsetOutOfRangeError
	if err := l.DeleteRecordsBefore(151); !errors.As(err, &oor) || oor.LogEndOffset != 150 {
		t.Fatalf("DeleteRecordsBefore(151): %v", err)
	}
	crash(l)
	l = mustOpen(t, dir, smallConfig())
	defer l.Close()
	check(l)
	if err := l.DeleteRecordsBefore(150); err != nil || l.LogStartOffset() != 150 {
		t.Fatalf("DeleteRecordsBefore(end): %v, start %d", err, l.LogStartOffset())
	}
	if got, err := l.Read(150, -1, 0, 0); err != nil || len(got) != 0 {
		t.Fatalf("Read(end) = %v, %v", got, err)
	}
}
