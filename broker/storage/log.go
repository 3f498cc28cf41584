package storage

import (
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Log is the replicated-log storage of one partition: a directory of
// segments, the last of which takes appends.
//
// Concurrency: one writer at a time (writeMu serialises Append, AppendRaw,
// Truncate, retention, Flush and Close) and any number of readers. Readers
// hold mu shared while they touch segment files; the writer takes mu
// exclusively only to change the segment list or to cut or delete files
// (roll, truncation, retention, close), never to append, so reads proceed
// while a batch is being written. Appended bytes become visible to readers
// only when the segment size and the log end offset are published, after
// the write has completed. Rolled segments are fsynced by a background
// goroutine (see flush.go), which touches only the recovery point.
type Log struct {
	dir string
	cfg atomic.Pointer[Config]

	writeMu sync.Mutex
	mu      sync.RWMutex
	segs    []*segment // by base offset; the last is active
	closed  bool       // set under both locks

	logStart  atomic.Int64
	leo       atomic.Int64
	epochs    *epochCache
	producers *producerState // idempotent producers; the writer's (writeMu)

	// Writer state, guarded by writeMu.
	unflushed  int64 // messages appended since the last fsync
	flushTimer *time.Timer
	enc        batchEncoder
	encBuf     []byte
	hdrBuf     []BatchHeader
	scratch    []byte // decompressed records of batches being verified

	durability // the recovery point and background syncs of rolled segments
}

// Dir returns the directory holding the log's files.
func (l *Log) Dir() string { return l.dir }

// Config returns the configuration in force, with defaults filled in.
func (l *Log) Config() Config { return *l.cfg.Load() }

// SetConfig changes the topic configuration at runtime; it takes effect
// from the next append, roll or retention pass.
func (l *Log) SetConfig(cfg Config) {
	c := cfg.normalized()
	l.cfg.Store(&c)
}

// LogStartOffset is the first offset that may be read.
func (l *Log) LogStartOffset() int64 { return l.logStart.Load() }

// LogEndOffset is the offset the next appended record will get.
func (l *Log) LogEndOffset() int64 { return l.leo.Load() }

// Size is the number of bytes of all segment log files.
func (l *Log) Size() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var n int64
	for _, s := range l.segs {
		n += s.size.Load()
	}
	return n
}

// SegmentCount is the number of segments, the active one included.
func (l *Log) SegmentCount() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.segs)
}

// LatestEpoch is the newest leader epoch that wrote to the log, -1 if none.
func (l *Log) LatestEpoch() int32 { return l.epochs.latest() }

// AssignEpoch records that leader epoch epoch starts at the log end offset,
// as a newly elected leader does before it writes anything (Kafka assigns
// the epoch on becoming leader), so that EndOffsetForEpoch answers for the
// new epoch at once: a follower asking where its own latest epoch ends then
// gets the start of this one. An epoch not newer than the latest is
// ignored. Like Append, it takes the writer's lock; the cache is updated in
// memory even if persisting the checkpoint fails, which it reports. An
// epoch that never wrote is trimmed again when the log is reopened.
func (l *Log) AssignEpoch(epoch int32) (err error) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if err := l.writable(); err != nil {
		return err
	}
	defer func() { err = l.checkSync(err) }()
	if !l.epochs.assign(epoch, l.leo.Load()) {
		return nil
	}
	return l.epochs.persist(l.dir)
}

// EndOffsetForEpoch answers OffsetsForLeaderEpoch with Kafka's semantics:
// the largest epoch ≤ epoch that wrote to the log and the start offset of
// the next higher epoch, or LogEndOffset if epoch is the latest; (-1, -1)
// for an empty cache or an epoch above the latest. An epoch below every
// known one yields (epoch, start offset of the oldest known epoch).
func (l *Log) EndOffsetForEpoch(epoch int32) (foundEpoch int32, endOffset int64) {
	return l.epochs.endOffsetFor(epoch, l.leo.Load())
}

// keepScratch keeps a decompression buffer for the next batch the writer
// verifies, unless one odd batch made it huge. Callers hold writeMu.
func (l *Log) keepScratch(b []byte) {
	if cap(b) <= 4<<20 {
		l.scratch = b
	}
}

// active returns the segment taking appends. Callers hold writeMu or mu.
func (l *Log) active() *segment { return l.segs[len(l.segs)-1] }

// segmentFor returns the index of the segment that would hold offset.
// Callers hold writeMu or mu.
func (l *Log) segmentFor(offset int64) int {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > offset })
	return max(i-1, 0)
}

// Close flushes the log and leaves a clean-shutdown marker so that the
// next Open trusts the indexes instead of scanning the active segment. A
// failed log (see Err) is closed without either, and returns its failure:
// the next Open checks it again from its last synced offset.
func (l *Log) Close() error {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if l.closed {
		return nil
	}
	if l.flushTimer != nil {
		l.flushTimer.Stop()
		l.flushTimer = nil
	}
	l.stopSyncer()
	err := l.Err()
	if err == nil {
		l.active().closeTimeIndex()
		err = l.checkSync(l.flushAll())
	}
	if err == nil {
		// The state at the log end, so that the next Open replays nothing.
		err = l.checkSync(l.snapshotProducers(true))
	}
	if err == nil {
		marker := filepath.Join(l.dir, cleanShutdownFile)
		err = writeFileSync(marker, nil)
		if err == nil {
			err = syncDir(l.dir)
		}
		if err = l.checkSync(err); err != nil {
			_ = os.Remove(marker) // a marker that may not be durable must not be trusted either
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for _, s := range l.segs {
		if e := s.close(); err == nil {
			err = e
		}
	}
	return err
}

// Delete closes the log and removes its directory (topic deletion).
func (l *Log) Delete() error {
	// A failed flush does not matter for files about to be removed.
	_ = l.Close()
	return os.RemoveAll(l.dir)
}
