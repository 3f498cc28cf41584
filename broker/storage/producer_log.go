package storage

import (
	"errors"
	"io"
	"os"
	"time"
)

// The Log keeps its producer state (producer.go) in step with its
// batches: every append updates it after the batch is written, a roll
// snapshots it at the new segment's base offset and Close at the log end,
// Open loads the latest snapshot at or below the log end and replays the
// batch headers after it, and a truncation drops the snapshots past the
// cut before cutting and rebuilds the state the same way.

// expiryInterval spaces out the removal of expired producers, as Kafka's
// producer.id.expiration.check.interval.ms does (10 minutes). It runs
// on appends only: the state of a partition nobody writes to does not
// grow, and a producer that is forgotten late is still deduplicated.
const expiryInterval = 10 * time.Minute

// loadProducers builds the producer state of a freshly loaded log.
// Callers hold writeMu or run before the log is shared.
func (l *Log) loadProducers(cfg Config, now time.Time) error {
	end := l.leo.Load()
	if err := removeSnapshots(l.dir, func(off int64) bool { return off > end }); err != nil {
		return err
	}
	ps, from, err := latestSnapshot(l.dir, end)
	if err != nil {
		return err
	}
	if ps == nil {
		ps, from = newProducerState(), l.segs[0].base
	}
	l.producers = ps
	if err := l.replayProducers(from); err != nil {
		return err
	}
	l.producers.expire(now, cfg.ProducerIDExpiration)
	l.producers.evict(cfg.MaxProducers)
	return nil
}

// replayProducers applies the headers of the batches from offset from to
// the log end to the producer state. Batches past the recovery point were
// verified when the log was loaded; the state counts idleness from their
// timestamps.
func (l *Log) replayProducers(from int64) error {
	for _, s := range l.segs {
		if s.next.Load() <= from {
			continue
		}
		pos := int64(0)
		if from > s.base {
			pos = s.index.lookup(from)
		}
		sc := newBatchScanner(s.log, pos, s.size.Load(), maxReadChunk, true)
		for {
			_, h, _, err := sc.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if h.BaseOffset >= from && h.ProducerID >= 0 {
				l.producers.update(h, h.MaxTimestamp)
			}
		}
	}
	return nil
}

// reloadProducers rebuilds the producer state after a truncation to the
// log end. Callers hold writeMu.
func (l *Log) reloadProducers() error {
	return l.loadProducers(l.Config(), time.Now())
}

// snapshotProducers writes the producer state as of the log end offset,
// unless a snapshot there exists already. Callers hold writeMu.
func (l *Log) snapshotProducers(sync bool) error {
	off := l.leo.Load()
	if _, err := os.Stat(snapshotPath(l.dir, off)); err == nil && !sync {
		return nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return writeProducerSnapshot(l.dir, off, l.producers, sync)
}

// trimSnapshots deletes the snapshots below the first segment, which can
// no longer be replayed from, except the newest: a log that lost every
// snapshot after them would otherwise forget producers whose batches
// retention deleted. Callers hold writeMu.
func (l *Log) trimSnapshots() error {
	offsets, err := listSnapshots(l.dir)
	if err != nil || len(offsets) == 0 {
		return err
	}
	first, newest := l.segs[0].base, offsets[len(offsets)-1]
	return removeSnapshots(l.dir, func(off int64) bool { return off < first && off != newest })
}

// checkProducer decides on an idempotent batch of count records before it
// is written: write it, answer with the batch already in the log (dup)
// when it is a retry of one, or refuse it. Callers hold writeMu.
func (l *Log) checkProducer(p Producer, count int32) (dup producerBatch, isDup bool, err error) {
	return l.producers.check(p, count)
}

// afterProducerAppend removes expired producers now and then and keeps
// their number bounded. Callers hold writeMu.
func (l *Log) afterProducerAppend(cfg Config, now time.Time) {
	if now.Sub(l.producers.lastExpiry) >= expiryInterval {
		l.producers.expire(now, cfg.ProducerIDExpiration)
	}
	l.producers.evict(cfg.MaxProducers)
}

// Producers lists the idempotent producers the partition remembers.
func (l *Log) Producers() []ProducerInfo {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	return l.producers.list()
}
