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
