package storage

import "sync"

// recentBatchCount is how many of a segment's last batches recentBatches
// remembers: enough for the batches appended while a follower's fetch is
// on its way under many concurrent producers.
const recentBatchCount = 16

// recentBatches remembers where a segment's last few batches start. The
// sparse offset index has an entry only every index.interval.bytes, so a
// read at the log end — every follower's fetch, and a consumer that has
// caught up — would otherwise start at an entry up to that far before its
// batch, reading and skipping the batches between (more than ten times
// the bytes it returns, for small batches).
//
// The writer adds each batch once its bytes are written and forgets those
// a truncation cuts; readers take a start position only below the size
// they read up to, which covers only whole, written batches.
type recentBatches struct {
	mu      sync.Mutex
	entries [recentBatchCount]batchStart
	n, next int
}

type batchStart struct{ offset, pos int64 }

// add records that the batch with base offset offset starts at pos.
func (r *recentBatches) add(offset, pos int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries[r.next] = batchStart{offset, pos}
	r.next = (r.next + 1) % recentBatchCount
	r.n = min(r.n+1, recentBatchCount)
}

// lookup returns the start of the remembered batch with the largest base
// offset at or below offset that starts below size, if any.
func (r *recentBatches) lookup(offset, size int64) (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	best, found := batchStart{offset: -1}, false
	for _, e := range r.entries[:r.n] {
		if e.offset <= offset && e.pos < size && e.offset > best.offset {
			best, found = e, true
		}
	}
	return best.pos, found
}

// truncate forgets the batches at or after byte pos.
func (r *recentBatches) truncate(pos int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := 0
	var out [recentBatchCount]batchStart
	// Oldest first, so that the ring's order survives.
	for i := range r.n {
		e := r.entries[(r.next-r.n+i+recentBatchCount)%recentBatchCount]
		if e.pos < pos {
			out[kept] = e
			kept++
		}
	}
	r.entries, r.n, r.next = out, kept, kept%recentBatchCount
}
