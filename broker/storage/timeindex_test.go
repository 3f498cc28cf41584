package storage

import (
	"encoding/binary"
	"errors"
	"testing"
)

func TestTimeIndexLookup(t *testing.T) {
	ti := newTimeIndex(100)
	// Records below 110 are ≤ 1000, below 130 ≤ 1000, below 150 ≤ 2000.
	ti.append(1000, 110)
	ti.append(1000, 130)
	ti.append(2000, 150)
	for _, c := range []struct{ ts, from int64 }{
		{0, 100}, {1000, 100}, {1001, 130}, {2000, 130}, {2001, 150}, {1 << 50, 150},
	} {
		if got := ti.lookup(c.ts); got != c.from {
			t.Errorf("lookup(%d) = %d, want %d", c.ts, got, c.from)
		}
	}
	ti.truncateToOffset(149)
	if ts, next, ok := ti.last(); !ok || ts != 1000 || next != 130 {
		t.Fatalf("after truncateToOffset(149) last = %d %d %v", ts, next, ok)
	}
	ti.truncateToOffset(100)
	if _, _, ok := ti.last(); ok {
		t.Fatal("time index not empty")
	}
}

func TestParseTimeIndex(t *testing.T) {
	entries := func(es ...[2]int64) []byte {
		var b []byte
		for _, e := range es {
			b = binary.BigEndian.AppendUint64(b, uint64(e[0]))
			b = binary.BigEndian.AppendUint32(b, uint32(e[1]))
		}
		return b
	}
	cases := []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"empty", nil, true},
		{"good", entries([2]int64{-5, 1}, [2]int64{-5, 3}, [2]int64{90, 7}), true},
		{"partial", entries([2]int64{5, 1})[:11], false},
		{"offset zero", entries([2]int64{5, 0}), false},
		{"offsets repeat", entries([2]int64{5, 1}, [2]int64{6, 1}), false},
		{"time goes back", entries([2]int64{5, 1}, [2]int64{4, 2}), false},
		{"zeros", make([]byte, 36), false},
	}
	for _, c := range cases {
		_, err := parseTimeIndex(c.b, 50)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, errIndexCorrupt)) {
			t.Errorf("%s: err = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}
