package storage

import (
	"fmt"
	"io"
	"math"
)

// Truncate removes every record at or above offset, cutting at the start
// of the batch that holds offset (so the new log end offset is that
// batch's base offset, ≤ offset), together with the leader epochs that
// start at or past the new end. Replication uses it to discard a divergent
// tail. Truncating at or below the log start offset empties the log and
// continues at offset.
//
// At or past the log end no record goes, but the epochs that start at the
// log end still do, as in Kafka's truncateTo: a leader that recorded its
// new epoch at election (AssignEpoch) and wrote nothing before it lost the
// leadership holds such an entry, and kept, it would make the log refuse
// the older epochs' batches the new leader sends next.
func (l *Log) Truncate(offset int64) (err error) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if err := l.writable(); err != nil {
		return err
	}
	defer func() { err = l.checkSync(err) }()
	if offset >= l.leo.Load() {
		if l.epochs.truncateFromEnd(l.leo.Load()) {
			return l.epochs.persist(l.dir)
		}
		return nil
	}
	if offset <= l.logStart.Load() {
		return l.truncateFullyAndStartAt(offset)
	}
	// Snapshots past the cut describe batches about to go: they go first,
	// so that no crash leaves one to be believed about a log written
	// again differently.
	if err := removeSnapshots(l.dir, func(off int64) bool { return off > offset }); err != nil {
		return err
	}
	l.cutting()
	l.mu.Lock()
	err = l.truncateLocked(offset)
	l.mu.Unlock()
	if err != nil {
		return err
	}
	if err := l.reloadProducers(); err != nil {
		return err
	}
	if l.epochs.truncateFromEnd(l.leo.Load()) {
		if err := l.epochs.persist(l.dir); err != nil {
			return err
		}
	}
	l.unflushed = 0
	return l.lowerRecoveryPoint(l.leo.Load())
}

// truncateLocked cuts the segments; callers hold writeMu and mu.
func (l *Log) truncateLocked(offset int64) error {
	for len(l.segs) > 1 && l.active().base >= offset {
		if err := l.active().remove(); err != nil {
			return err
		}
		l.segs = l.segs[:len(l.segs)-1]
	}
	s := l.active()
	pos, next, err := s.batchContaining(offset)
	if err != nil {
		return err
	}
	if err := s.truncateTo(pos, next); err != nil {
		return err
	}
	l.leo.Store(next)
	return nil
}

// TruncateFullyAndStartAt deletes every segment and continues the log,
// empty, at offset: a follower whose log ended below the leader's log
// start offset does this before fetching again.
func (l *Log) TruncateFullyAndStartAt(offset int64) (err error) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if err := l.writable(); err != nil {
		return err
	}
	defer func() { err = l.checkSync(err) }()
	return l.truncateFullyAndStartAt(offset)
}

func (l *Log) truncateFullyAndStartAt(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("storage: cannot start a log at offset %d", offset)
	}
	l.cutting()
	if err := removeSnapshots(l.dir, func(int64) bool { return true }); err != nil {
		return err
	}
	l.producers = newProducerState()
	// The start offset goes to disk first: a crash part-way through leaves
	// a log that Open restarts at offset.
	if err := writeOffsetCheckpoint(l.dir, logStartOffsetFile, offset); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.segs) > 0 {
		if err := l.active().remove(); err != nil {
			return err
		}
		l.segs = l.segs[:len(l.segs)-1]
	}
	s, err := createSegment(l.dir, offset)
	if err != nil {
		return err
	}
	l.segs = []*segment{s}
	l.leo.Store(offset)
	l.logStart.Store(offset)
	if err := syncDir(l.dir); err != nil {
		return err
	}
	if l.epochs.clear() {
		if err := l.epochs.persist(l.dir); err != nil {
			return err
		}
	}
	l.unflushed = 0
	return l.lowerRecoveryPoint(offset)
}

// batchContaining returns the position and base offset of the first batch
// whose last offset is ≥ offset, or the segment's end.
func (s *segment) batchContaining(offset int64) (pos, base int64, err error) {
	sc := newBatchScanner(s.log, s.index.lookup(offset), s.size.Load(), minReadChunk, true)
	for {
		p, h, _, err := sc.next()
		if err == io.EOF {
			return s.size.Load(), s.next.Load(), nil
		}
		if err != nil {
			return 0, 0, err
		}
		if h.LastOffset() >= offset {
			return p, h.BaseOffset, nil
		}
	}
}

// truncateTo cuts the segment at byte pos, where the batch with base offset
// next starts, and brings its indexes and largest timestamp back in line.
func (s *segment) truncateTo(pos, next int64) error {
	if err := s.log.Truncate(pos); err != nil {
		return err
	}
	s.index.truncateToPos(pos)
	s.recent.truncate(pos)
	s.timeIndex.truncateToOffset(next)
	s.size.Store(pos)
	s.next.Store(next)
	s.indexDirty, s.unsynced = true, true
	// The last surviving time entry bounds the records below its offset;
	// batches after it are read again for the largest timestamp.
	maxTs, from := int64(math.MinInt64), s.base
	if t, x, ok := s.timeIndex.last(); ok {
		maxTs, from = t, x
	}
	lastIndexed := int64(0)
	if _, p, ok := s.index.last(); ok {
		lastIndexed = p
	}
	s.bytesSinceIndex = int(pos - lastIndexed)
	sc := newBatchScanner(s.log, s.index.lookup(from), pos, maxReadChunk, true)
	for {
		_, h, _, err := sc.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		maxTs = max(maxTs, h.MaxTimestamp)
	}
	s.maxTs.Store(maxTs)
	return nil
}
