package storage

import (
	"encoding/binary"
	"errors"
	"testing"
)

func TestOffsetIndexLookup(t *testing.T) {
	ix := newOffsetIndex(100)
	for i, e := range [][2]int64{{100, 0}, {110, 4096}, {125, 9000}, {200, 20000}} {
		ix.append(e[0], e[1])
		if ix.len() != i+1 {
			t.Fatalf("len = %d", ix.len())
		}
	}
	for _, c := range []struct{ off, pos int64 }{
		{50, 0}, {100, 0}, {109, 0}, {110, 4096}, {124, 4096}, {125, 9000}, {199, 9000}, {200, 20000}, {1 << 40, 20000},
	} {
		if got := ix.lookup(c.off); got != c.pos {
			t.Errorf("lookup(%d) = %d, want %d", c.off, got, c.pos)
		}
	}
	if off, pos, ok := ix.last(); !ok || off != 200 || pos != 20000 {
		t.Fatalf("last = %d %d %v", off, pos, ok)
	}
	ix.truncateToPos(9000)
	if off, _, _ := ix.last(); off != 110 || ix.len() != 2 {
		t.Fatalf("after truncateToPos(9000) last = %d, len %d", off, ix.len())
	}
	ix.truncateToPos(0)
	if _, _, ok := ix.last(); ok || ix.lookup(150) != 0 {
		t.Fatal("index not empty after truncateToPos(0)")
	}
}

func TestParseOffsetIndex(t *testing.T) {
	entries := func(es ...[2]uint32) []byte {
		var b []byte
		for _, e := range es {
			b = binary.BigEndian.AppendUint32(b, e[0])
			b = binary.BigEndian.AppendUint32(b, e[1])
		}
		return b
	}
	cases := []struct {
		name    string
		b       []byte
		logSize int64
		ok      bool
	}{
		{"empty index, empty log", nil, 0, true},
		{"good", entries([2]uint32{0, 0}, [2]uint32{5, 100}, [2]uint32{9, 300}), 400, true},
		{"empty index, data in log", nil, 10, false},
		{"entries for an empty log", entries([2]uint32{0, 0}), 0, false},
		{"partial entry", entries([2]uint32{0, 0})[:7], 100, false},
		{"first entry not at 0", entries([2]uint32{1, 0}), 100, false},
		{"first position not 0", entries([2]uint32{0, 8}), 100, false},
		{"offsets repeat", entries([2]uint32{0, 0}, [2]uint32{0, 100}), 400, false},
		{"positions go back", entries([2]uint32{0, 0}, [2]uint32{5, 100}, [2]uint32{9, 50}), 400, false},
		{"position past the log", entries([2]uint32{0, 0}, [2]uint32{5, 400}), 400, false},
		{"all zero", make([]byte, 64), 400, false},
		{"all 0xff", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 400, false},
	}
	for _, c := range cases {
		_, err := parseOffsetIndex(c.b, 1000, c.logSize)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, errIndexCorrupt)) {
			t.Errorf("%s: err = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}
