package storage

import (
	"slices"
	"sync"
)

// indexBuf holds the entries of one index file. While its segment takes
// appends they live on the heap; once the segment is sealed they are
// served from a read-only memory mapping of the file, so that the indexes
// of many old segments cost page cache, which the OS can reclaim, rather
// than heap. Any change moves them back to the heap first.
//
// Readers hold mu shared while they search buf; the mapping is replaced or
// unmapped only under mu held exclusively.
type indexBuf struct {
	mu      sync.RWMutex
	buf     []byte
	mapping []byte // the whole mapping while buf lies in one
}

// mapFile replaces the heap copy with a mapping of path, which must hold
// the same bytes. Where mapping is unsupported or fails, the heap copy
// stays.
func (b *indexBuf) mapFile(path string) {
	m, err := mmapFile(path)
	if err != nil || len(m) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(m) != len(b.buf) {
		_ = munmap(m)
		return
	}
	b.unmapLocked(false)
	b.buf, b.mapping = m[:len(m):len(m)], m
}

// unmapLocked drops the mapping, keeping a heap copy of the entries if
// keep is set. Callers hold mu.
func (b *indexBuf) unmapLocked(keep bool) {
	if b.mapping == nil {
		return
	}
	if keep {
		b.buf = slices.Clone(b.buf)
	} else {
		b.buf = nil
	}
	_ = munmap(b.mapping)
	b.mapping = nil
}

// writable prepares buf for a change; callers hold mu.
func (b *indexBuf) writable() { b.unmapLocked(true) }

// release unmaps the entries when the segment is closed.
func (b *indexBuf) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.unmapLocked(false)
}

// mapped reports whether the entries are served from a mapping.
func (b *indexBuf) mapped() bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.mapping != nil
}
