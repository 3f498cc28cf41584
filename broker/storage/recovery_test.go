package storage

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"
)

func TestSegmentRecoverRebuildsIndexes(t *testing.T) {
	dir := t.TempDir()
	s, _ := createSegment(dir, 100)
	writeBatches(t, s, 100, 30, 4, 700)
	wantIndex, wantTime := s.index.snapshot(), s.timeIndex.snapshot()
	s.close()

	s, err := openSegment(dir, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	var seen int
	cut, err := s.recover(700, storedRecordsLimit, func(BatchHeader) { seen++ })
	if err != nil || cut || seen != 30 {
		t.Fatalf("recover: cut %v, %d batches, %v", cut, seen, err)
	}
	if string(s.index.snapshot()) != string(wantIndex) || string(s.timeIndex.snapshot()) != string(wantTime) {
		t.Fatal("rebuilt indexes differ from those built by appending")
	}
	if s.next.Load() != 220 || s.rollBase != rec(103).Timestamp {
		t.Fatalf("next %d roll base %d", s.next.Load(), s.rollBase)
	}
}

func TestSegmentRecoverCutsAtFirstBadBatch(t *testing.T) {
	b1, _ := EncodeBatch(nil, 10, 0, []Record{rec(10), rec(11)})
	b2, _ := EncodeBatch(nil, 12, 0, []Record{rec(12)})
	jump, _ := EncodeBatch(nil, 14, 0, []Record{rec(14)})
	bad := append([]byte(nil), b2...)
	bad[len(bad)-1] ^= 1
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	for name, c := range map[string]struct {
		data     []byte
		wantSize int
		wantNext int64
	}{
		"torn tail":          {cat(b1, b2[:len(b2)-3]), len(b1), 12},
		"bad crc":            {cat(b1, bad, b2), len(b1), 12},
		"offset gap":         {cat(b1, jump), len(b1), 12},
		"wrong first offset": {cat(b2), 0, 10},
		"good":               {cat(b1, b2), len(b1) + len(b2), 13},
	} {
		dir := t.TempDir()
		os.WriteFile(segmentPath(dir, 10, logSuffix), c.data, 0o644)
		s, _ := openSegment(dir, 10)
		cut, err := s.recover(4096, storedRecordsLimit, nil)
		if err != nil || cut != (c.wantSize < len(c.data)) || s.size.Load() != int64(c.wantSize) || s.next.Load() != c.wantNext {
			t.Fatalf("%s: cut %v size %d next %d, %v", name, cut, s.size.Load(), s.next.Load(), err)
		}
		if fileSize(t, s.log.Name()) != int64(c.wantSize) {
			t.Fatalf("%s: file not cut", name)
		}
		s.close()
	}
}

func TestSegmentLoadIndexesChecks(t *testing.T) {
	build := func(t *testing.T) string {
		dir := t.TempDir()
		s, _ := createSegment(dir, 0)
		writeBatches(t, s, 0, 40, 2, 300)
		s.seal()
		s.close()
		return dir
	}
	load := func(dir string) error {
		s, _ := openSegment(dir, 0)
		defer s.close()
		return s.loadIndexes(300)
	}
	if err := load(build(t)); err != nil {
		t.Fatalf("sound segment: %v", err)
	}
	// Sorted entries that point between batches fail the spot check.
	dir := build(t)
	p := segmentPath(dir, 0, indexSuffix)
	b, _ := os.ReadFile(p)
	for i := 1; i < len(b)/offsetEntrySize; i++ {
		e := b[i*offsetEntrySize:]
		binary.BigEndian.PutUint32(e[4:], binary.BigEndian.Uint32(e[4:])+1)
	}
	os.WriteFile(p, b, 0o644)
	if err := load(dir); !errors.Is(err, errIndexCorrupt) && !errors.Is(err, ErrCorrupt) {
		t.Fatalf("shifted positions: %v", err)
	}
	// A time index that stops short of the segment's end is rebuilt.
	dir = build(t)
	p = segmentPath(dir, 0, timeIndexSuffix)
	os.Truncate(p, fileSize(t, p)-timeEntrySize)
	if err := load(dir); !errors.Is(err, errIndexCorrupt) {
		t.Fatalf("short time index: %v", err)
	}
	// An index with its tail cut is completed from the log.
	dir = build(t)
	p = segmentPath(dir, 0, indexSuffix)
	full, _ := os.ReadFile(p)
	os.Truncate(p, 2*offsetEntrySize)
	s, _ := openSegment(dir, 0)
	defer s.close()
	if err := s.loadIndexes(300); err != nil || string(s.index.snapshot()) != string(full) || !s.indexDirty {
		t.Fatalf("completed index: %v, %d of %d bytes", err, len(s.index.snapshot()), len(full))
	}
}
