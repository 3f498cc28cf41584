package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// offsetEntrySize is the size of one .index entry: the batch's base offset
// relative to the segment (uint32) and its byte position (uint32).
const offsetEntrySize = 8

// errIndexCorrupt marks an index file that must be rebuilt from its log.
var errIndexCorrupt = errors.New("storage: index inconsistent with its log")

// offsetIndex is the sparse offset index of one segment. The first batch of
// a segment is always indexed, then one batch per index.interval.bytes.
// Entries are appended by the single writer and searched by readers, so a
// small RWMutex guards the slice.
type offsetIndex struct {
	base int64
	indexBuf
}

func newOffsetIndex(base int64) *offsetIndex { return &offsetIndex{base: base} }

// parseOffsetIndex loads index bytes read from disk and rejects anything a
// sound index of a logSize-byte segment could not contain.
func parseOffsetIndex(b []byte, base, logSize int64) (*offsetIndex, error) {
	if len(b)%offsetEntrySize != 0 {
		return nil, fmt.Errorf("%w: %d bytes is not a whole number of entries", errIndexCorrupt, len(b))
	}
	ix := &offsetIndex{base: base}
	ix.buf = b
	n := ix.len()
	if (n == 0) != (logSize == 0) {
		return nil, fmt.Errorf("%w: %d entries for %d log bytes", errIndexCorrupt, n, logSize)
	}
	var prevOff, prevPos int64 = -1, -1
	for i := range n {
		off, pos := ix.entry(i)
		if i == 0 && (off != base || pos != 0) {
			return nil, fmt.Errorf("%w: first entry does not point at the first batch", errIndexCorrupt)
		}
		if off <= prevOff || pos <= prevPos || pos >= logSize {
			return nil, fmt.Errorf("%w: entry %d (%d, %d) out of order", errIndexCorrupt, i, off, pos)
		}
		prevOff, prevPos = off, pos
	}
	return ix, nil
}

func (ix *offsetIndex) len() int { return len(ix.buf) / offsetEntrySize }

// entry returns entry i as an absolute offset and a position.
func (ix *offsetIndex) entry(i int) (off, pos int64) {
	e := ix.buf[i*offsetEntrySize:]
	return ix.base + int64(binary.BigEndian.Uint32(e)), int64(binary.BigEndian.Uint32(e[4:]))
}

// append adds an entry; off and pos must exceed those of the last entry.
func (ix *offsetIndex) append(off, pos int64) {
	ix.mu.Lock()
	ix.writable()
	ix.buf = binary.BigEndian.AppendUint32(ix.buf, uint32(off-ix.base))
	ix.buf = binary.BigEndian.AppendUint32(ix.buf, uint32(pos))
	ix.mu.Unlock()
}

// lookup returns the position of the last indexed batch starting at or
// below off: a scan from there reaches the batch holding off.
func (ix *offsetIndex) lookup(off int64) int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	i := sort.Search(ix.len(), func(i int) bool {
		o, _ := ix.entry(i)
		return o > off
	})
	if i == 0 {
		return 0
	}
	_, pos := ix.entry(i - 1)
	return pos
}

// last returns the final entry.
func (ix *offsetIndex) last() (off, pos int64, ok bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.len() == 0 {
		return 0, 0, false
	}
	off, pos = ix.entry(ix.len() - 1)
	return off, pos, true
}

// truncateToPos drops the entries of batches at or after byte pos.
func (ix *offsetIndex) truncateToPos(pos int64) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.writable()
	n := sort.Search(ix.len(), func(i int) bool {
		_, p := ix.entry(i)
		return p >= pos
	})
	ix.buf = ix.buf[:n*offsetEntrySize]
}

// snapshot copies the entries for writing to disk.
func (ix *offsetIndex) snapshot() []byte {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return append([]byte(nil), ix.buf...)
}
