package storage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// epochLog builds 150 records in batches of 5: epoch 1 for [0, 50), 2 for
// [50, 100), 3 for [100, 150).
func epochLog(t *testing.T, dir string) *Log {
	t.Helper()
	l := mustOpen(t, dir, smallConfig())
	appendRange(t, l, 0, 50, 5, 1)
	appendRange(t, l, 50, 100, 5, 2)
	appendRange(t, l, 100, 150, 5, 3)
	return l
}

func TestTruncate(t *testing.T) {
	for _, c := range []struct {
		name       string
		offset     int64
		wantEnd    int64
		wantLatest int32
	}{
		{"at a batch boundary", 120, 120, 3},
		{"inside a batch", 123, 120, 3},
		{"at an epoch start", 100, 100, 2},
		{"into an older segment", 13, 10, 1},
		{"at the end", 150, 150, 3},
		{"past the end", 500, 150, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			l := epochLog(t, dir)
			segsBefore := l.SegmentCount()
			if err := l.Truncate(c.offset); err != nil {
				t.Fatal(err)
			}
			check := func(l *Log) {
				t.Helper()
				if l.LogEndOffset() != c.wantEnd || l.LatestEpoch() != c.wantLatest {
					t.Fatalf("end %d epoch %d, want %d %d", l.LogEndOffset(), l.LatestEpoch(), c.wantEnd, c.wantLatest)
				}
				if e, end := l.EndOffsetForEpoch(c.wantLatest); e != c.wantLatest || end != c.wantEnd {
					t.Fatalf("EndOffsetForEpoch(%d) = %d, %d", c.wantLatest, e, end)
				}
				checkRecords(t, readAll(t, l), 0, c.wantEnd)
				if _, err := l.Read(c.wantEnd+1, -1, 0, 0); !errors.Is(err, ErrOffsetOutOfRange) {
					t.Fatalf("Read past the new end: %v", err)
				}
				if got, _ := l.OffsetForTimestamp(rec(c.wantEnd).Timestamp); got != c.wantEnd {
					t.Fatalf("OffsetForTimestamp after truncation = %d", got)
				}
			}
			check(l)
			if c.wantEnd < 50 && l.SegmentCount() >= segsBefore {
				t.Fatalf("segments %d → %d", segsBefore, l.SegmentCount())
			}
			if logs := segmentFiles(t, dir, logSuffix); len(logs) != l.SegmentCount() {
				t.Fatalf("%d .log files for %d segments", len(logs), l.SegmentCount())
			}
			l.Close()
			l = mustOpen(t, dir, smallConfig())
			check(l)
			// The divergent tail is replaced by a new leader's records.
			appendRange(t, l, c.wantEnd, c.wantEnd+30, 4, 7)
			crash(l)
			l = mustOpen(t, dir, smallConfig())
			defer l.Close()
			checkRecords(t, readAll(t, l), 0, c.wantEnd+30)
			if e, end := l.EndOffsetForEpoch(c.wantLatest); e != c.wantLatest || end != c.wantEnd {
				t.Fatalf("EndOffsetForEpoch(%d) after new epoch = %d, %d", c.wantLatest, e, end)
			}
		})
	}
}

func TestTruncateBelowLogStart(t *testing.T) {
	dir := t.TempDir()
	l := epochLog(t, dir)
	if err := l.DeleteRecordsBefore(60); err != nil {
		t.Fatal(err)
	}
	if err := l.Truncate(55); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 55 || l.LogEndOffset() != 55 || l.LatestEpoch() != -1 {
		t.Fatalf("start %d end %d epoch %d", l.LogStartOffset(), l.LogEndOffset(), l.LatestEpoch())
	}
	l.Close()
}

func TestTruncateFullyAndStartAt(t *testing.T) {
	dir := t.TempDir()
	l := epochLog(t, dir)
	if err := l.TruncateFullyAndStartAt(1000); err != nil {
		t.Fatal(err)
	}
	check := func(l *Log, end int64) {
		t.Helper()
		if l.LogStartOffset() != 1000 || l.LogEndOffset() != end {
			t.Fatalf("start %d end %d", l.LogStartOffset(), l.LogEndOffset())
		}
		if _, err := l.Read(999, -1, 0, 0); !errors.Is(err, ErrOffsetOutOfRange) {
			t.Fatalf("Read(999): %v", err)
		}
	}
	check(l, 1000)
	if l.LatestEpoch() != -1 || l.Size() != 0 {
		t.Fatalf("epoch %d size %d", l.LatestEpoch(), l.Size())
	}
	logs := segmentFiles(t, dir, logSuffix)
	if len(logs) != 1 || filepath.Base(logs[0]) != "00000000000000001000.log" {
		t.Fatalf("files %v", logs)
	}
	crash(l)
	l = mustOpen(t, dir, smallConfig())
	check(l, 1000)
	appendRange(t, l, 1000, 1020, 3, 9)
	l.Close()
	l = mustOpen(t, dir, smallConfig())
	defer l.Close()
	check(l, 1020)
	got, err := l.Read(1000, -1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, 1000, 1020)
	if err := l.TruncateFullyAndStartAt(-1); err == nil {
		t.Fatal("negative start accepted")
	}
}

// TestTruncateFullyCrashHalfWay leaves the state a crash between the
// checkpoint write and the new segment would: Open starts at the new offset.
func TestTruncateFullyCrashHalfWay(t *testing.T) {
	dir := t.TempDir()
	l := epochLog(t, dir)
	crash(l)
	if err := writeOffsetCheckpoint(dir, logStartOffsetFile, 500); err != nil {
		t.Fatal(err)
	}
	for _, p := range segmentFiles(t, dir, logSuffix)[:2] {
		os.Remove(p)
	}
	l = mustOpen(t, dir, smallConfig())
	defer l.Close()
	if l.LogStartOffset() != 500 || l.LogEndOffset() != 500 || l.Size() != 0 {
		t.Fatalf("start %d end %d size %d", l.LogStartOffset(), l.LogEndOffset(), l.Size())
	}
}
