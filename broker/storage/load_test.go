package storage

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRecoveryPointLimitsScan shows that after a crash only segments from
// the recovery point on are scanned: damage below it is left for reads to
// report, damage above it is cut.
func TestRecoveryPointLimitsScan(t *testing.T) {
	dir := t.TempDir()
	cfg := smallConfig()
	l := mustOpen(t, dir, cfg)
	appendRange(t, l, 0, 200, 5, 0)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	appendRange(t, l, 200, 400, 5, 0)
	crash(l)
	logs := segmentFiles(t, dir, logSuffix)
	var below, above string
	for _, p := range logs {
		base, _, _ := parseSegmentName(filepath.Base(p))
		if below == "" && base > 0 && base < 150 {
			below = p
		}
		if base > 250 && above == "" {
			above = p
		}
	}
	bb, ba := batchesIn(t, below), batchesIn(t, above)
	flipByte(t, below, bb[1].pos+BatchHeaderSize+2) // not in the segment's tail
	flipByte(t, above, ba[2].pos+BatchHeaderSize+2)

	l = mustOpen(t, dir, cfg)
	defer l.Close()
	if l.LogEndOffset() != ba[2].base {
		t.Fatalf("log end %d, want the damaged batch above the recovery point at %d", l.LogEndOffset(), ba[2].base)
	}
	if _, err := l.Read(bb[1].base, -1, 0, 0); err == nil {
		t.Fatal("damage below the recovery point was served")
	}
	got, err := l.Read(0, -1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, 0, bb[1].base)
}

func TestOpenDropsOverlappingAndEmptySegments(t *testing.T) {
	dir := t.TempDir()
	cfg := smallConfig()
	l := mustOpen(t, dir, cfg)
	appendRange(t, l, 0, 100, 5, 0)
	l.Close()
	// A segment that starts inside its predecessor cannot be right, and
	// an empty one in the middle holds nothing.
	b, _ := EncodeBatch(nil, 3, 0, []Record{rec(3)})
	os.WriteFile(segmentPath(dir, 3, logSuffix), b, 0o644)
	l = mustOpen(t, dir, cfg)
	if l.LogEndOffset() != 100 {
		t.Fatalf("log end %d", l.LogEndOffset())
	}
	checkRecords(t, readAll(t, l), 0, 100)
	if _, err := os.Stat(segmentPath(dir, 3, logSuffix)); !os.IsNotExist(err) {
		t.Fatal("overlapping segment kept")
	}
	l.Close()
}

func TestConfigNormalized(t *testing.T) {
	c := Config{SegmentBytes: 1 << 40, IndexIntervalBytes: -1, MaxBatchBytes: -5, RetentionMs: -1}.normalized()
	if c.SegmentBytes != maxSegmentBytes || c.IndexIntervalBytes != 4096 || c.MaxBatchBytes != DefaultMaxBatchBytes || c.RetentionMs != -1 {
		t.Fatalf("normalized = %+v", c)
	}
}
