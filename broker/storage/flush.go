package storage

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// checkpointInterval spaces out recovery-point checkpoint writes after
// rolls, as Kafka's log.flush.offset.checkpoint.interval.ms does: a crash
// then rescans at most that much more log than strictly needed.
var checkpointInterval = 10 * time.Second

// durability tracks what is known to be on disk. The recovery point is
// changed by the writer and by the background syncer, so it has its own
// lock, which is never held across an fsync of log data.
//
// A failed fsync fails the log for good (failure, see Log.Err): every write
// is refused from then on, the recovery point stays where the last
// successful fsync left it, and Close writes no clean-shutdown marker, so
// the next Open checks the log again from that point. Retrying would not
// do: after a failed writeback Linux may drop the dirty pages and mark them
// clean, and the next fsync then succeeds without the data on disk.
type durability struct {
	rpMu           sync.Mutex
	recoveryPoint  int64     // everything below it is on disk
	checkpointedRP int64     // the recovery point last written to disk
	checkpointed   time.Time // when it was written

	failure atomic.Pointer[error] // the first failed fsync, wrapped in ErrLogFailed

	// gen changes whenever a truncation may have removed data that a
	// queued background sync speaks for; such a sync then leaves the
	// recovery point alone.
	gen    atomic.Uint64
	syncCh chan syncJob // started by the first roll
	syncWG sync.WaitGroup

	// flushes counts the fsyncs the flush policy made (Flushes).
	flushes atomic.Int64
}

// syncJob asks for segment s to be fsynced; afterwards everything below
// next is on disk.
type syncJob struct {
	s    *segment
	next int64
	gen  uint64
}

// syncInBackground fsyncs a rolled segment without holding up appends:
// with 1 GiB segments written at page-cache speed that fsync can take
// seconds. Jobs run in roll order, so the recovery point only ever moves
// past segments that are all on disk. Callers hold writeMu.
func (l *Log) syncInBackground(s *segment, next int64) {
	if l.syncCh == nil {
		l.syncCh = make(chan syncJob, 16)
		l.syncWG.Add(1)
		go l.syncLoop(l.syncCh)
	}
	l.syncCh <- syncJob{s: s, next: next, gen: l.gen.Load()}
}

func (l *Log) syncLoop(jobs <-chan syncJob) {
	defer l.syncWG.Done()
	for j := range jobs {
		// A segment deleted in the meantime fails with os.ErrClosed,
		// which does not matter: its data is gone anyway.
		err := syncOpenFile(j.s.log)
		if err != nil && !errors.Is(err, os.ErrClosed) {
			_ = l.fail(err) // every later write reports it
			continue
		}
		l.rpMu.Lock()
		// Jobs run in roll order: once one has failed, no later one may
		// move the recovery point past the segment it could not sync.
		if err == nil && l.Err() == nil && j.gen == l.gen.Load() && j.next > l.recoveryPoint {
			l.recoveryPoint = j.next
			if time.Since(l.checkpointed) >= checkpointInterval {
				if err := l.writeRecoveryPointLocked(); err != nil {
					_ = l.fail(err)
				}
			}
		}
		l.rpMu.Unlock()
	}
}

// Err returns nil while the log is healthy and, once an fsync of its files
// has failed, that failure (wrapping ErrLogFailed) for good: the log then
// refuses every write with it, keeps its recovery point where the last
// successful fsync left it and leaves no clean-shutdown marker when
// closed. Only opening the log again, which checks every batch from that
// point on, clears it.
func (l *Log) Err() error {
	if e := l.failure.Load(); e != nil {
		return *e
	}
	return nil
}

// fail records cause as the log's failure unless one is recorded already,
// and returns the recorded one.
func (l *Log) fail(cause error) error {
	err := fmt.Errorf("%w: %w", ErrLogFailed, cause)
	l.failure.CompareAndSwap(nil, &err)
	return l.Err()
}

// checkSync turns an error that comes from a failed fsync into the log's
// failure; writers return what it returns.
func (l *Log) checkSync(err error) error {
	if err != nil && errors.Is(err, errSyncFailed) {
		return l.fail(err)
	}
	return err
}

// writable reports why the log takes no writes: closed or failed.
// Callers hold writeMu.
func (l *Log) writable() error {
	if l.closed {
		return ErrClosed
	}
	return l.Err()
}

// stopSyncer waits for queued background syncs; callers hold writeMu.
func (l *Log) stopSyncer() {
	if l.syncCh != nil {
		close(l.syncCh)
		l.syncWG.Wait()
		l.syncCh = nil
	}
}

// cutting is called before a truncation: syncs queued earlier must not
// move the recovery point past what survives it.
func (l *Log) cutting() { l.gen.Add(1) }

// Flush writes everything appended so far to disk, index files included,
// and moves the recovery point to the log end offset.
func (l *Log) Flush() error {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if err := l.writable(); err != nil {
		return err
	}
	return l.checkSync(l.flushAll())
}

// flushAll fsyncs every segment and checkpoints the log end offset as the
// recovery point. Callers hold writeMu.
func (l *Log) flushAll() error {
	for _, s := range l.segs {
		if err := s.flush(); err != nil {
			return err
		}
	}
	l.unflushed = 0
	return l.setRecoveryPoint(l.leo.Load())
}

// setRecoveryPoint records that everything below off is on disk and
// checkpoints it, unless the log has failed: then the recovery point stays
// where the last successful fsync left it.
func (l *Log) setRecoveryPoint(off int64) error {
	l.rpMu.Lock()
	defer l.rpMu.Unlock()
	if err := l.Err(); err != nil {
		return err
	}
	l.recoveryPoint = off
	return l.writeRecoveryPointLocked()
}

// lowerRecoveryPoint keeps the recovery point at or below off after a
// truncation.
func (l *Log) lowerRecoveryPoint(off int64) error {
	l.rpMu.Lock()
	defer l.rpMu.Unlock()
	l.recoveryPoint = min(l.recoveryPoint, off)
	return l.writeRecoveryPointLocked()
}

// writeRecoveryPointLocked checkpoints the recovery point if it changed.
// Callers hold rpMu.
func (l *Log) writeRecoveryPointLocked() error {
	if l.recoveryPoint == l.checkpointedRP {
		return nil
	}
	if err := writeOffsetCheckpoint(l.dir, recoveryPointFile, l.recoveryPoint); err != nil {
		return err
	}
	l.checkpointedRP, l.checkpointed = l.recoveryPoint, time.Now()
	return nil
}

// afterAppend applies flush.messages and flush.ms.
func (l *Log) afterAppend(messages int64, cfg Config) error {
	l.unflushed += messages
	if cfg.FlushMessages > 0 && l.unflushed >= cfg.FlushMessages {
		return l.syncActive()
	}
	if cfg.FlushMs > 0 && l.flushTimer == nil {
		l.flushTimer = time.AfterFunc(cfg.FlushMs, l.timedFlush)
	}
	return nil
}

func (l *Log) syncActive() error {
	if err := l.active().syncLog(); err != nil {
		return err
	}
	l.unflushed = 0
	l.flushes.Add(1)
	return nil
}

// Flushes is the number of fsyncs the flush policy (flush.messages,
// flush.ms) has made since the log was opened: with flush.messages=1, one
// per append — and one per group of AppendMany.
func (l *Log) Flushes() int64 { return l.flushes.Load() }

// timedFlush runs flush.ms after the first unflushed write.
func (l *Log) timedFlush() {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	l.flushTimer = nil
	if l.writable() == nil && l.unflushed > 0 {
		// A failure fails the log; every later write reports it.
		_ = l.checkSync(l.syncActive())
	}
}
