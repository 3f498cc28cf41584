package storage

import (
	"time"
)

// ApplyRetention deletes whole segments from the old end of the log:
// those whose newest record is older than retention.ms, then as many as
// keep the log above retention.bytes — in both cases only segments wholly
// below highWatermark, the offset below which every in-sync replica holds
// the log — then those entirely below the log start offset. The log start
// offset moves to the first remaining segment, so it never passes the
// high watermark. If every segment has expired and the high watermark is
// the log end, an empty segment is rolled first so the log keeps its end
// offset. It returns how many segments it deleted.
//
// Without the high watermark bound a record written with an old timestamp
// (or a burst beyond retention.bytes) could be deleted from the leader
// before any follower copied it: the followers would restart past it, and
// the high watermark would then pass a record no replica holds.
func (l *Log) ApplyRetention(now time.Time, highWatermark int64) (deletedSegments int, err error) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if err := l.writable(); err != nil {
		return 0, err
	}
	defer func() { err = l.checkSync(err) }()
	cfg := l.Config()
	// committed counts the segments that hold nothing at or above the high
	// watermark: retention may take those and no others.
	committed := 0
	for committed < len(l.segs) && l.segs[committed].next.Load() <= highWatermark {
		committed++
	}
	n := 0
	if cfg.RetentionMs > 0 {
		cutoff := now.UnixMilli() - cfg.RetentionMs.Milliseconds()
		for n < len(l.segs) && l.segs[n].size.Load() > 0 && l.segs[n].maxTs.Load() < cutoff {
			n++
		}
	}
	if cfg.RetentionBytes > 0 {
		excess := -cfg.RetentionBytes
		for _, s := range l.segs {
			excess += s.size.Load()
		}
		for i := 0; i < len(l.segs)-1; i++ {
			excess -= l.segs[i].size.Load()
			if excess < 0 {
				break
			}
			n = max(n, i+1)
		}
	}
	n = min(n, committed)
	start := l.logStart.Load()
	for n < len(l.segs)-1 && l.segs[n+1].base <= start {
		n++
	}
	if n == 0 {
		return 0, nil
	}
	if n == len(l.segs) {
		if err := l.roll(l.leo.Load()); err != nil {
			return 0, err
		}
	}
	return n, l.deleteOldest(n)
}

// DeleteRecordsBefore moves the log start offset up to offset, deleting the
// segments that hold nothing at or above it. Records below it can no
// longer be read. An offset past the log end offset fails with
// *OffsetOutOfRangeError.
func (l *Log) DeleteRecordsBefore(offset int64) (err error) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if err := l.writable(); err != nil {
		return err
	}
	defer func() { err = l.checkSync(err) }()
	start, leo := l.logStart.Load(), l.leo.Load()
	if offset > leo {
		return &OffsetOutOfRangeError{Offset: offset, LogStartOffset: start, LogEndOffset: leo}
	}
	if offset <= start {
		return nil
	}
	if err := l.setLogStart(offset); err != nil {
		return err
	}
	n := 0
	for n < len(l.segs)-1 && l.segs[n+1].base <= offset {
		n++
	}
	return l.deleteOldest(n)
}

// deleteOldest removes the n oldest segments (never the active one) and
// moves the log start offset to the first remaining one if it is behind.
func (l *Log) deleteOldest(n int) error {
	if n == 0 {
		return l.trimEpochs()
	}
	if first := l.segs[n].base; first > l.logStart.Load() {
		if err := l.setLogStart(first); err != nil {
			return err
		}
	}
	l.mu.Lock()
	doomed := l.segs[:n:n]
	l.segs = append([]*segment(nil), l.segs[n:]...)
	l.mu.Unlock()
	for _, s := range doomed {
		if err := s.remove(); err != nil {
			return err
		}
	}
	if err := l.trimSnapshots(); err != nil {
		return err
	}
	return l.trimEpochs()
}

// setLogStart persists and publishes a new log start offset.
func (l *Log) setLogStart(offset int64) error {
	if err := writeOffsetCheckpoint(l.dir, logStartOffsetFile, offset); err != nil {
		return err
	}
	l.logStart.Store(offset)
	return nil
}

func (l *Log) trimEpochs() error {
	if l.epochs.truncateFromStart(l.logStart.Load()) {
		return l.epochs.persist(l.dir)
	}
	return nil
}
