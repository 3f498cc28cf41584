package storage

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// timeEntrySize is the size of one .timeindex entry: a timestamp (int64)
// and an offset relative to the segment (uint32).
const timeEntrySize = 12

// timeIndex is the sparse time index of one segment. An entry (T, X) says
// that every record of the segment below offset X has a timestamp ≤ T, so a
// search for the first record at or after time t may start at the X of the
// last entry with T < t. Entries are added at offset-index points when the
// segment's largest timestamp has grown, and once more, (largest timestamp,
// next offset), when the segment is sealed or closed; T never decreases and
// X strictly increases.
type timeIndex struct {
	base int64
	indexBuf
}

func newTimeIndex(base int64) *timeIndex { return &timeIndex{base: base} }

// parseTimeIndex loads time index bytes read from disk. Whether the last X
// lies inside the segment is checked once the segment's end is known.
func parseTimeIndex(b []byte, base int64) (*timeIndex, error) {
	if len(b)%timeEntrySize != 0 {
		return nil, fmt.Errorf("%w: time index of %d bytes", errIndexCorrupt, len(b))
	}
	ti := &timeIndex{base: base}
	ti.buf = b
	var prevTs, prevOff int64
	for i := range ti.len() {
		ts, off := ti.entry(i)
		if off <= base || (i > 0 && (ts < prevTs || off <= prevOff)) {
			return nil, fmt.Errorf("%w: time index entry %d (%d, %d) out of order", errIndexCorrupt, i, ts, off)
		}
		prevTs, prevOff = ts, off
	}
	return ti, nil
}

func (ti *timeIndex) len() int { return len(ti.buf) / timeEntrySize }

func (ti *timeIndex) entry(i int) (ts, next int64) {
	e := ti.buf[i*timeEntrySize:]
	return int64(binary.BigEndian.Uint64(e)), ti.base + int64(binary.BigEndian.Uint32(e[8:]))
}

// append records that every record below next has a timestamp ≤ ts.
func (ti *timeIndex) append(ts, next int64) {
	ti.mu.Lock()
	ti.writable()
	ti.buf = binary.BigEndian.AppendUint64(ti.buf, uint64(ts))
	ti.buf = binary.BigEndian.AppendUint32(ti.buf, uint32(next-ti.base))
	ti.mu.Unlock()
}

// last returns the final entry.
func (ti *timeIndex) last() (ts, next int64, ok bool) {
	ti.mu.RLock()
	defer ti.mu.RUnlock()
	if ti.len() == 0 {
		return 0, 0, false
	}
	ts, next = ti.entry(ti.len() - 1)
	return ts, next, true
}

// lookup returns the offset from which to scan for the first record with a
// timestamp ≥ ts: no record below it qualifies.
func (ti *timeIndex) lookup(ts int64) int64 {
	ti.mu.RLock()
	defer ti.mu.RUnlock()
	i := sort.Search(ti.len(), func(i int) bool {
		t, _ := ti.entry(i)
		return t >= ts
	})
	if i == 0 {
		return ti.base
	}
	_, next := ti.entry(i - 1)
	return next
}

// truncateToOffset drops entries that speak about offsets at or past next.
func (ti *timeIndex) truncateToOffset(next int64) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ti.writable()
	n := sort.Search(ti.len(), func(i int) bool {
		_, x := ti.entry(i)
		return x > next
	})
	ti.buf = ti.buf[:n*timeEntrySize]
}

func (ti *timeIndex) snapshot() []byte {
	ti.mu.RLock()
	defer ti.mu.RUnlock()
	return append([]byte(nil), ti.buf...)
}
