package storage

import (
	"runtime"
	"testing"
)

// sparseIndexConfig indexes one batch per MiB: reads that start from the
// index would scan everything appended since.
func sparseIndexConfig() Config {
	c := DefaultConfig()
	c.IndexIntervalBytes = 1 << 20
	c.RetentionMs = -1
	return c
}

// TestReadAtTheLogEndReadsItsBatch: a follower's fetch of the batch just
// appended reads that batch, not everything since the sparse index's last
// entry. Before, a read at the end of 2000 small batches allocated (and
// read from the file) all of them, about 200 KB.
func TestReadAtTheLogEndReadsItsBatch(t *testing.T) {
	l := mustOpen(t, t.TempDir(), sparseIndexConfig())
	defer l.Close()
	appendRange(t, l, 0, 2000, 1, 1)
	last := l.LogEndOffset() - 1
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	raw, err := l.ReadRaw(last, -1, 1<<20)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	h, err := ParseBatchHeader(raw)
	if err != nil || h.BaseOffset != last || h.Size() != len(raw) {
		t.Fatalf("read at %d: batch %+v (%d bytes), %v", last, h, len(raw), err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<10 {
		t.Fatalf("reading one %d-byte batch at the log end allocated %d bytes", len(raw), n)
	}
}

// TestRecentBatchesAfterTruncation: the batch starts remembered for reads
// at the log end are forgotten where a truncation cuts, so a tail
// appended again in other batch boundaries reads right at every offset.
func TestRecentBatchesAfterTruncation(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, sparseIndexConfig())
	appendRange(t, l, 0, 40, 1, 1)
	if err := l.Truncate(30); err != nil {
		t.Fatal(err)
	}
	// Offsets 30-32 in one batch now, where each had its own.
	appendRange(t, l, 30, 45, 3, 2)
	check := func(l *Log) {
		t.Helper()
		for off := int64(0); off < 45; off++ {
			got, err := l.Read(off, -1, 0, 1)
			if err != nil || len(got) != 1 {
				t.Fatalf("Read(%d): %d records, %v", off, len(got), err)
			}
			checkRecord(t, got[0], off)
			raw, err := l.ReadRaw(off, -1, 1)
			if err != nil {
				t.Fatalf("ReadRaw(%d): %v", off, err)
			}
			h, err := ParseBatchHeader(raw)
			if err != nil || h.BaseOffset > off || h.LastOffset() < off {
				t.Fatalf("ReadRaw(%d): batch %d-%d, %v", off, h.BaseOffset, h.LastOffset(), err)
			}
		}
	}
	check(l)
	l.Close()
	l = mustOpen(t, dir, sparseIndexConfig())
	defer l.Close()
	check(l)
}

// TestRecentBatchesRing: the ring keeps the last recentBatchCount batch
// starts in order through wrapping and truncation.
func TestRecentBatchesRing(t *testing.T) {
	var r recentBatches
	for i := range int64(40) {
		r.add(i*10, i*100)
	}
	if pos, ok := r.lookup(395, 1<<30); !ok || pos != 3900 {
		t.Fatalf("lookup(395) = %d %v", pos, ok)
	}
	if _, ok := r.lookup(200, 1<<30); ok {
		t.Fatal("offset 200 is older than the ring")
	}
	if pos, ok := r.lookup(390, 3900); !ok || pos != 3800 {
		t.Fatalf("lookup below size 3900 = %d %v", pos, ok)
	}
	r.truncate(3500)
	if pos, ok := r.lookup(395, 1<<30); !ok || pos != 3400 {
		t.Fatalf("after truncation at 3500, lookup(395) = %d %v", pos, ok)
	}
	r.add(350, 3500)
	if pos, ok := r.lookup(355, 1<<30); !ok || pos != 3500 {
		t.Fatalf("after a new append, lookup(355) = %d %v", pos, ok)
	}
	if pos, ok := r.lookup(249, 1<<30); !ok || pos != 2400 {
		t.Fatalf("the oldest kept, lookup(249) = %d %v", pos, ok)
	}
}
