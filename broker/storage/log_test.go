package storage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestOpenCreatesEmptyLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "topic-0")
	l := mustOpen(t, dir, Config{})
	defer l.Close()
	if l.LogStartOffset() != 0 || l.LogEndOffset() != 0 || l.Size() != 0 || l.LatestEpoch() != -1 {
		t.Fatalf("start %d end %d size %d epoch %d", l.LogStartOffset(), l.LogEndOffset(), l.Size(), l.LatestEpoch())
	}
	if _, err := os.Stat(filepath.Join(dir, "00000000000000000000.log")); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Read(0, -1, 0, 0); err != nil || len(got) != 0 {
		t.Fatalf("Read(0) on empty log = %v, %v", got, err)
	}
	if c := l.Config(); c.SegmentBytes != 1<<30 || c.IndexIntervalBytes != 4096 || c.MaxBatchBytes != DefaultMaxBatchBytes || c.RetentionMs != 0 {
		t.Fatalf("zero config normalised to %+v", c)
	}
}

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	if c.SegmentBytes != 1<<30 || c.SegmentMs != 7*24*time.Hour || c.IndexIntervalBytes != 4096 || c.RetentionMs != 7*24*time.Hour ||
		c.RetentionBytes != -1 || c.FlushMessages != 0 || c.FlushMs != 0 || c.MaxBatchBytes != 1<<20+BatchHeaderSize {
		t.Fatalf("DefaultConfig = %+v", c)
	}
}

// TestManySegmentsRestartEveryStep appends in many small steps across many
// segments, reopening the log after every step (alternately after a clean
// close and after a crash) and reading everything back each time.
func TestManySegmentsRestartEveryStep(t *testing.T) {
	dir := t.TempDir()
	cfg := smallConfig()
	var end int64
	for step := range 24 {
		l := mustOpen(t, dir, cfg)
		if l.LogEndOffset() != end {
			t.Fatalf("step %d: reopened at %d, want %d", step, l.LogEndOffset(), end)
		}
		checkRecords(t, readAll(t, l), 0, end)
		appendRange(t, l, end, end+int64(10+step*3), 1+step%5, 1)
		end += int64(10 + step*3)
		checkRecords(t, readAll(t, l), 0, end)
		if step%2 == 0 {
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		} else {
			crash(l)
		}
	}
	l := mustOpen(t, dir, cfg)
	defer l.Close()
	if n := l.SegmentCount(); n < 10 {
		t.Fatalf("only %d segments; the test wants many", n)
	}
	if logs := segmentFiles(t, dir, logSuffix); len(logs) != l.SegmentCount() {
		t.Fatalf("%d .log files for %d segments", len(logs), l.SegmentCount())
	}
	checkRecords(t, readAll(t, l), 0, end)
}

// TestReadAcrossSegments starts a read at every offset and checks that it
// continues through segment boundaries.
func TestReadAcrossSegments(t *testing.T) {
	l := mustOpen(t, t.TempDir(), smallConfig())
	defer l.Close()
	appendRange(t, l, 0, 300, 4, 0)
	if l.SegmentCount() < 5 {
		t.Fatalf("%d segments", l.SegmentCount())
	}
	for off := int64(0); off < 300; off++ {
		n := min(int64(60), 300-off)
		got, err := l.Read(off, -1, 0, int(n))
		if err != nil {
			t.Fatalf("Read(%d): %v", off, err)
		}
		checkRecords(t, got, off, off+n)
	}
	got, err := l.Read(0, -1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, 0, 300)
}

func TestReadLimits(t *testing.T) {
	l := mustOpen(t, t.TempDir(), smallConfig())
	defer l.Close()
	appendRange(t, l, 0, 100, 10, 0)
	read := func(off, maxOff int64, maxBytes, maxRecords int) []Record {
		t.Helper()
		got, err := l.Read(off, maxOff, maxBytes, maxRecords)
		if err != nil {
			t.Fatalf("Read(%d, %d, %d, %d): %v", off, maxOff, maxBytes, maxRecords, err)
		}
		return got
	}
	checkRecords(t, read(5, -1, 0, 3), 5, 8)       // starts inside a batch
	checkRecords(t, read(5, 17, 0, 0), 5, 17)      // maxOffset inside a batch
	checkRecords(t, read(95, 1000, 0, 0), 95, 100) // maxOffset past the end
	checkRecords(t, read(12, 12, 0, 0), 12, 12)    // empty range
	checkRecords(t, read(12, 3, 0, 0), 12, 12)     // maxOffset below offset
	checkRecords(t, read(100, -1, 0, 0), 100, 100) // at the log end
	// maxBytes counts encoded records; the first is returned even when
	// it alone is larger.
	checkRecords(t, read(20, -1, 1, 0), 20, 21)
	// Records 20 and 21 open a batch of ten, as they were appended.
	b, _ := EncodeBatch(nil, 20, 0, []Record{rec(20), rec(21)})
	var d recordDecoder
	h, _ := ParseBatchHeader(b)
	d.reset(b[BatchHeaderSize:], h)
	var two int
	for d.more() {
		if _, err := d.next(false); err != nil {
			t.Fatal(err)
		}
		two += d.size
	}
	checkRecords(t, read(20, -1, two, 0), 20, 22)
	checkRecords(t, read(20, -1, two-1, 0), 20, 21)
	checkRecords(t, read(20, -1, two, 1), 20, 21)
}

func TestOffsetOutOfRangeError(t *testing.T) {
	l := mustOpen(t, t.TempDir(), smallConfig())
	defer l.Close()
	appendRange(t, l, 0, 50, 5, 0)
	for _, off := range []int64{-1, 51, 1 << 40} {
		_, err := l.Read(off, -1, 0, 0)
		var oor *OffsetOutOfRangeError
		if !errors.Is(err, ErrOffsetOutOfRange) || !errors.As(err, &oor) {
			t.Fatalf("Read(%d) err = %v", off, err)
		}
		if oor.Offset != off || oor.LogStartOffset != 0 || oor.LogEndOffset != 50 {
			t.Fatalf("error fields %+v", oor)
		}
		if _, err := l.ReadRaw(off, -1, 0); !errors.Is(err, ErrOffsetOutOfRange) {
			t.Fatalf("ReadRaw(%d) err = %v", off, err)
		}
	}
}

func TestClosedLog(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, smallConfig())
	appendRange(t, l, 0, 10, 5, 0)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, cleanShutdownFile)); err != nil {
		t.Fatalf("no clean-shutdown marker: %v", err)
	}
	if _, _, err := l.Append([]Record{{}}, 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	if _, err := l.Read(0, -1, 0, 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
	if _, err := l.OffsetForTimestamp(0); !errors.Is(err, ErrClosed) {
		t.Fatalf("OffsetForTimestamp after Close: %v", err)
	}
	for name, err := range map[string]error{
		"Flush": l.Flush(), "Truncate": l.Truncate(0), "TruncateFullyAndStartAt": l.TruncateFullyAndStartAt(5), "DeleteRecordsBefore": l.DeleteRecordsBefore(1),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	// Reopening removes the marker so a later crash is noticed.
	l = mustOpen(t, dir, smallConfig())
	defer l.Close()
	if _, err := os.Stat(filepath.Join(dir, cleanShutdownFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("marker still there after Open: %v", err)
	}
}

func TestDeleteRemovesDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-3")
	l := mustOpen(t, dir, smallConfig())
	appendRange(t, l, 0, 100, 10, 0)
	if err := l.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("directory still exists: %v", err)
	}
}

func TestSizeCountsSegmentBytes(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, smallConfig())
	defer l.Close()
	appendRange(t, l, 0, 200, 3, 0)
	var onDisk int64
	for _, p := range segmentFiles(t, dir, logSuffix) {
		onDisk += fileSize(t, p)
	}
	if l.Size() != onDisk || onDisk == 0 {
		t.Fatalf("Size = %d, files hold %d", l.Size(), onDisk)
	}
}
