package storage

import (
	"os"
	"path/filepath"
	"testing"
)

// writeBatches appends batches of per records, offsets from base, to s.
func writeBatches(t *testing.T, s *segment, base int64, n, per int, interval int) {
	t.Helper()
	for i := 0; i < n; i++ {
		var rs []Record
		for j := 0; j < per; j++ {
			rs = append(rs, rec(base+int64(i*per+j)))
		}
		b, _ := EncodeBatch(nil, base+int64(i*per), 0, rs)
		h, _ := ParseBatchHeader(b)
		if err := s.append(b, []BatchHeader{h}, interval); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSegmentAppendIndexes(t *testing.T) {
	dir := t.TempDir()
	s, err := createSegment(dir, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if filepath.Base(s.log.Name()) != "00000000000000001000.log" {
		t.Fatalf("segment file %s", s.log.Name())
	}
	writeBatches(t, s, 1000, 40, 3, 1024)
	if s.next.Load() != 1120 || s.size.Load() != fileSize(t, s.log.Name()) {
		t.Fatalf("next %d size %d", s.next.Load(), s.size.Load())
	}
	// The first batch is indexed, then one per 1024 bytes.
	if off, pos := s.index.entry(0); off != 1000 || pos != 0 {
		t.Fatalf("first entry (%d, %d)", off, pos)
	}
	if n := s.index.len(); int64(n) < s.size.Load()/1024 || int64(n) > s.size.Load()/1024+1 {
		t.Fatalf("%d index entries for %d bytes", n, s.size.Load())
	}
	if s.maxTs.Load() != rec(1119).Timestamp {
		t.Fatalf("max timestamp %d", s.maxTs.Load())
	}
	// Timestamps grow with offsets, so every index point adds a time entry.
	if s.timeIndex.len() != s.index.len() {
		t.Fatalf("%d time entries for %d index entries", s.timeIndex.len(), s.index.len())
	}
	s.closeTimeIndex()
	if ts, next, _ := s.timeIndex.last(); ts != rec(1119).Timestamp || next != 1120 {
		t.Fatalf("final time entry (%d, %d)", ts, next)
	}
	s.closeTimeIndex()
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{indexSuffix, timeIndexSuffix} {
		b, err := os.ReadFile(segmentPath(dir, 1000, suffix))
		if err != nil {
			t.Fatal(err)
		}
		want := s.index.snapshot()
		if suffix == timeIndexSuffix {
			want = s.timeIndex.snapshot()
		}
		if string(b) != string(want) {
			t.Fatalf("%s on disk differs from memory", suffix)
		}
	}
	if !s.fits(1000+1<<32-1) || s.fits(1000+1<<32+1) {
		t.Fatal("fits does not follow the uint32 relative offset")
	}
}

func TestSegmentRemove(t *testing.T) {
	dir := t.TempDir()
	s, _ := createSegment(dir, 7)
	writeBatches(t, s, 7, 3, 2, 100)
	if err := s.seal(); err != nil {
		t.Fatal(err)
	}
	if err := s.remove(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("files left: %v", left)
	}
}

func TestCreateSegmentReplacesLeftovers(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(segmentPath(dir, 5, logSuffix), []byte("stale"), 0o644)
	os.WriteFile(segmentPath(dir, 5, indexSuffix), []byte("stale!!!"), 0o644)
	s, err := createSegment(dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if fileSize(t, s.log.Name()) != 0 {
		t.Fatal("leftover log bytes kept")
	}
	if _, err := os.Stat(segmentPath(dir, 5, indexSuffix)); !os.IsNotExist(err) {
		t.Fatal("leftover index kept")
	}
}
