package storage

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

func TestReadRaw(t *testing.T) {
	l := mustOpen(t, t.TempDir(), smallConfig())
	defer l.Close()
	appendRange(t, l, 0, 100, 10, 0)
	batch := func(base int64) []byte {
		var rs []Record
		for o := base; o < base+10; o++ {
			rs = append(rs, rec(o))
		}
		b, _ := EncodeBatch(nil, base, 0, rs)
		return b
	}
	two := len(batch(30)) + len(batch(40))
	cases := []struct {
		name             string
		offset, maxOff   int64
		maxBytes         int
		wantFirst, wantN int64 // first batch base, number of batches
	}{
		{"from a batch start", 30, -1, two, 30, 2},
		{"from inside a batch", 35, -1, two + 1, 30, 2},
		{"first batch even when too big", 35, -1, 1, 30, 1},
		{"stop before a batch that would exceed", 30, -1, two - 1, 30, 1},
		{"no byte limit", 0, -1, 0, 0, 10},
		{"cap at a batch boundary", 30, 50, 0, 30, 2},
		{"batch straddling the cap is left out", 30, 55, 0, 30, 2},
		{"nothing below the cap", 35, 39, 0, 0, 0},
	}
	for _, c := range cases {
		got, err := l.ReadRaw(c.offset, c.maxOff, c.maxBytes)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var want []byte
		for i := int64(0); i < c.wantN; i++ {
			want = append(want, batch(c.wantFirst+10*i)...)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: got %d bytes, want %d", c.name, len(got), len(want))
		}
	}
}

func TestOffsetForTimestamp(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, smallConfig())
	// Timestamps jump around within and across batches:
	// offset o has timestamp ts(o).
	ts := func(o int64) int64 { return 1000 + (o/10)*100 + (o%10)*7%10 }
	for o := int64(0); o < 300; o += 5 {
		var rs []Record
		for i := o; i < o+5; i++ {
			r := rec(i)
			r.Timestamp = ts(i)
			rs = append(rs, r)
		}
		if _, _, err := l.Append(rs, 0); err != nil {
			t.Fatal(err)
		}
	}
	want := func(target int64) int64 {
		for o := int64(0); o < 300; o++ {
			if ts(o) >= target {
				return o
			}
		}
		return 300
	}
	check := func(l *Log) {
		t.Helper()
		for _, target := range []int64{-1 << 40, 0, 1000, 1001, 1005, 1099, 1100, 1103, 2000, 2950, 3909, 3910, 1 << 50} {
			got, err := l.OffsetForTimestamp(target)
			if err != nil || got != want(target) {
				t.Fatalf("OffsetForTimestamp(%d) = %d, %v; want %d", target, got, err, want(target))
			}
		}
	}
	check(l)
	l.Close()
	l = mustOpen(t, dir, smallConfig())
	check(l)
	crash(l)
	l = mustOpen(t, dir, smallConfig())
	defer l.Close()
	check(l)
	// Below the log start nothing is found.
	if err := l.DeleteRecordsBefore(150); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.OffsetForTimestamp(0); got != 150 {
		t.Fatalf("after DeleteRecordsBefore(150): %d", got)
	}
}

// TestCorruptBatchNeverReturned flips a byte inside a batch in the middle of
// a cleanly closed log, where Open does not look: reads stop before it.
func TestCorruptBatchNeverReturned(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{IndexIntervalBytes: 256}
	l := mustOpen(t, dir, cfg)
	appendRange(t, l, 0, 200, 10, 0)
	raw, _ := l.ReadRaw(100, 110, 0) // the batch holding 100..109
	pos := l.segs[0].index.lookup(100)
	l.Close()
	f, err := os.OpenFile(segmentPath(dir, 0, logSuffix), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Search forward from the index position for the batch's bytes.
	buf := make([]byte, 8192)
	n, _ := f.ReadAt(buf, pos)
	at := bytes.Index(buf[:n], raw)
	if at < 0 {
		t.Fatal("batch not found")
	}
	flip := pos + int64(at) + int64(len(raw)) - 10
	b := []byte{0}
	f.ReadAt(b, flip)
	b[0] ^= 0x20
	f.WriteAt(b, flip)
	f.Close()

	l = mustOpen(t, dir, cfg)
	defer l.Close()
	if l.LogEndOffset() != 200 {
		t.Fatalf("log end %d", l.LogEndOffset())
	}
	got, err := l.Read(90, -1, 0, 0)
	if err != nil {
		t.Fatalf("Read(90): %v", err)
	}
	checkRecords(t, got, 90, 100)
	for _, off := range []int64{100, 105, 109} {
		if got, err := l.Read(off, -1, 0, 0); !errors.Is(err, ErrCorrupt) || len(got) != 0 {
			t.Fatalf("Read(%d) = %d records, %v", off, len(got), err)
		}
		if got, err := l.ReadRaw(off, -1, 0); !errors.Is(err, ErrCorrupt) || len(got) != 0 {
			t.Fatalf("ReadRaw(%d) = %d bytes, %v", off, len(got), err)
		}
	}
	got, err = l.Read(110, -1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, 110, 200)
}
