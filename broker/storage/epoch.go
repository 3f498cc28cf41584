package storage

import (
	"math"
	"sort"
	"sync"
	"sync/atomic"
)

// epochEntry says that leader epoch Epoch wrote its first batch at
// StartOffset.
type epochEntry struct {
	Epoch       int32
	StartOffset int64
}

// epochCache is the leader-epoch cache of a log (Kafka's
// leader-epoch-checkpoint): for every epoch that wrote to the log, the
// offset of its first batch. Epochs and start offsets both increase. The
// Log's writer changes it and persists it; readers query it under mu.
type epochCache struct {
	mu      sync.RWMutex
	entries []epochEntry
	// latestEpoch mirrors the last entry's epoch (-1 when empty) so that
	// the append path reads it without locking.
	latestEpoch atomic.Int32
}

func newEpochCache() *epochCache {
	c := &epochCache{}
	c.latestEpoch.Store(-1)
	return c
}

// publish refreshes latestEpoch; callers hold mu.
func (c *epochCache) publish() {
	if n := len(c.entries); n > 0 {
		c.latestEpoch.Store(c.entries[n-1].Epoch)
	} else {
		c.latestEpoch.Store(-1)
	}
}

// loadEpochCache reads the checkpoint; ok is false when it is missing or
// malformed, in which case the caller rebuilds it from the batches.
func loadEpochCache(dir string) (c *epochCache, ok bool) {
	c = newEpochCache()
	rows, err := readCheckpoint(dir, leaderEpochFile, 2)
	if err != nil {
		return c, false
	}
	defer c.publish()
	for _, r := range rows {
		e := epochEntry{Epoch: int32(r[0]), StartOffset: r[1]}
		if r[0] < 0 || r[0] > math.MaxInt32 || e.StartOffset < 0 {
			return newEpochCache(), false
		}
		if n := len(c.entries); n > 0 && (e.Epoch <= c.entries[n-1].Epoch || e.StartOffset < c.entries[n-1].StartOffset) {
			return newEpochCache(), false
		}
		c.entries = append(c.entries, e)
	}
	return c, true
}

// persist writes the checkpoint.
func (c *epochCache) persist(dir string) error {
	c.mu.RLock()
	rows := make([][]int64, len(c.entries))
	for i, e := range c.entries {
		rows[i] = []int64{int64(e.Epoch), e.StartOffset}
	}
	c.mu.RUnlock()
	return writeCheckpoint(dir, leaderEpochFile, rows)
}

// latest returns the newest epoch, or -1 when there is none.
func (c *epochCache) latest() int32 { return c.latestEpoch.Load() }

// assign records that epoch starts at start if it is newer than the latest
// epoch; it reports whether the cache changed. Negative epochs (batches
// written without one) are not tracked.
func (c *epochCache) assign(epoch int32, start int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.entries); epoch < 0 || (n > 0 && (epoch <= c.entries[n-1].Epoch || start < c.entries[n-1].StartOffset)) {
		return false
	}
	c.entries = append(c.entries, epochEntry{epoch, start})
	c.publish()
	return true
}

// endOffsetFor answers OffsetsForLeaderEpoch exactly as Kafka's
// LeaderEpochFileCache.endOffsetFor does:
//   - the latest epoch ends at the log end offset;
//   - an older epoch E ends where the first epoch above E starts, and the
//     answer names the largest known epoch ≤ E;
//   - an epoch below every known one gets itself and the first start
//     offset (the log before it has been deleted);
//   - an unknown epoch above the latest, an empty cache or epoch -1 get
//     (-1, -1).
func (c *epochCache) endOffsetFor(epoch int32, leo int64) (int32, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := len(c.entries)
	if epoch < 0 || n == 0 {
		return -1, -1
	}
	if epoch == c.entries[n-1].Epoch {
		return epoch, leo
	}
	hi := sort.Search(n, func(i int) bool { return c.entries[i].Epoch > epoch })
	switch {
	case hi == n:
		return -1, -1
	case hi == 0:
		return epoch, c.entries[0].StartOffset
	default:
		return c.entries[hi-1].Epoch, c.entries[hi].StartOffset
	}
}

// truncateFromEnd removes the epochs that start at or after end.
func (c *epochCache) truncateFromEnd(end int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := sort.Search(len(c.entries), func(i int) bool { return c.entries[i].StartOffset >= end })
	changed := i < len(c.entries)
	c.entries = c.entries[:i]
	c.publish()
	return changed
}

// truncateFromStart drops epochs that end at or before start and moves the
// start of the epoch holding start up to it.
func (c *epochCache) truncateFromStart(start int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := sort.Search(len(c.entries), func(i int) bool { return c.entries[i].StartOffset > start })
	if i == 0 {
		return false
	}
	changed := i > 1 || c.entries[0].StartOffset != start
	c.entries = append(c.entries[:0], c.entries[i-1:]...)
	c.entries[0].StartOffset = start
	c.publish()
	return changed
}

// clear empties the cache.
func (c *epochCache) clear() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := len(c.entries) > 0
	c.entries = nil
	c.publish()
	return changed
}
