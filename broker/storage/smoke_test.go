package storage

import "testing"

func TestSmoke(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, smallConfig())
	appendRange(t, l, 0, 500, 7, 1)
	checkRecords(t, readAll(t, l), 0, 500)
	t.Logf("segments %d size %d", l.SegmentCount(), l.Size())
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, dir, smallConfig())
	checkRecords(t, readAll(t, l), 0, 500)
	appendRange(t, l, 500, 600, 3, 2)
	crash(l)
	l = mustOpen(t, dir, smallConfig())
	checkRecords(t, readAll(t, l), 0, 600)
	l.Close()
}
