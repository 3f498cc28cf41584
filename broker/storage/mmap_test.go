package storage

import (
	"runtime"
	"testing"
)

func TestSealedIndexesAreMapped(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("indexes are only mapped on unix")
	}
	dir := t.TempDir()
	l := mustOpen(t, dir, smallConfig())
	appendRange(t, l, 0, 200, 5, 0)
	check := func(l *Log) {
		t.Helper()
		for i, s := range l.segs {
			sealed := i < len(l.segs)-1
			if s.index.mapped() != sealed || s.timeIndex.mapped() != sealed {
				t.Fatalf("segment %d (sealed %v): index mapped %v, time index mapped %v", s.base, sealed, s.index.mapped(), s.timeIndex.mapped())
			}
		}
		checkRecords(t, readAll(t, l), 0, l.LogEndOffset())
	}
	check(l)
	l.Close()
	l = mustOpen(t, dir, smallConfig())
	defer l.Close()
	check(l)
	// Truncating into a sealed segment makes it active: its indexes move
	// back to the heap and take appends.
	if err := l.Truncate(l.segs[1].base + 3); err != nil {
		t.Fatal(err)
	}
	check(l)
	appendRange(t, l, l.LogEndOffset(), l.LogEndOffset()+30, 2, 0)
	check(l)
}

func TestIndexBufMapping(t *testing.T) {
	dir := t.TempDir()
	s, _ := createSegment(dir, 0)
	defer s.close()
	writeBatches(t, s, 0, 20, 2, 100)
	s.seal()
	s.mapIndexes()
	before := s.index.snapshot()
	pos := s.index.lookup(17)
	if s.index.mapped() != (runtime.GOOS != "windows") && runtime.GOOS == "linux" {
		t.Fatal("not mapped")
	}
	s.index.append(100, s.size.Load())
	if s.index.mapped() || string(s.index.snapshot()[:len(before)]) != string(before) || s.index.lookup(17) != pos {
		t.Fatal("append to a mapped index lost entries")
	}
}
