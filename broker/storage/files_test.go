package storage

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestParseSegmentName(t *testing.T) {
	for _, c := range []struct {
		name   string
		base   int64
		suffix string
		ok     bool
	}{
		{"00000000000000000000.log", 0, ".log", true},
		{"00000000000000012345.index", 12345, ".index", true},
		{"09223372036854775807.timeindex", 1<<63 - 1, ".timeindex", true},
		{"00000000000000000000.log.tmp", 0, "", false},
		{"0000000000000000000.log", 0, "", false},
		{"+0000000000000000001.log", 0, "", false},
		{"99999999999999999999.log", 0, "", false},
		{"00000000000000000000.snapshot", 0, "", false},
		{"leader-epoch-checkpoint", 0, "", false},
	} {
		base, suffix, ok := parseSegmentName(c.name)
		if ok != c.ok || (ok && (base != c.base || suffix != c.suffix)) {
			t.Errorf("parseSegmentName(%q) = %d %q %v", c.name, base, suffix, ok)
		}
	}
}

func TestListSegmentsCleansUp(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{
		"00000000000000000000.log", "00000000000000000000.index",
		"00000000000000000050.log",
		"00000000000000000099.index", "00000000000000000099.timeindex", // log gone
		"recovery-point-offset-checkpoint.tmp", // interrupted write
		"partition.metadata",                   // not ours
	} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	bases, err := listSegments(dir)
	if err != nil || !slices.Equal(bases, []int64{0, 50}) {
		t.Fatalf("bases %v, %v", bases, err)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{"00000000000000000000.index", "00000000000000000000.log", "00000000000000000050.log", "partition.metadata"}
	if !slices.Equal(left, want) {
		t.Fatalf("left %v, want %v", left, want)
	}
}

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
