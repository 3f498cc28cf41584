package storage

import (
	"fmt"
	"math"
	"time"
)

// RecordSet is the records of one batch to append and how to write it:
// Records, or Count records encoded as a records section (AppendSection),
// which is written without decoding them (a zero timestamp is now).
type RecordSet struct {
	Records []Record
	Section []byte
	Count   int
	Options BatchOptions
}

// AppendMany writes several record sets in one write, each as its own batch
// stamped with leaderEpoch, at consecutive offsets — the batches one
// AppendRecords per set would write, in order — and applies the fsync
// policy once for all of them. It is group commit: the sets that
// concurrent producers of one partition queued while the previous write
// ran share the next write and its fsync.
//
// A set of an idempotent producer is checked and deduplicated as
// AppendRecords does, against the producer's batches written before it,
// those of this group included: a producer's second set in one group
// makes the sets before it be written first, so that its sequence is
// checked against them.
//
// errs[i] is set for a set that cannot be written (empty, larger than
// max.message.bytes, out of its producer's sequence), and the others are
// written without it; a failure of the write itself, or a log that takes
// no writes, is the error of every set not yet written. Offset and, where
// it was 0, Timestamp are set on the Records of every written set.
func (l *Log) AppendMany(sets []RecordSet, leaderEpoch int32) (results []AppendResult, errs []error) {
	results, errs = make([]AppendResult, len(sets)), make([]error, len(sets))
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if err := l.writable(); err != nil {
		return results, fillErrors(errs, 0, err)
	}
	if leaderEpoch >= 0 && leaderEpoch < l.epochs.latest() {
		return results, fillErrors(errs, 0, fmt.Errorf("%w: %d < %d", ErrStaleEpoch, leaderEpoch, l.epochs.latest()))
	}
	g := groupWrite{l: l, cfg: l.Config(), now: time.Now(), buf: l.encBuf[:0], hdrs: l.hdrBuf[:0]}
	nowMs := g.now.UnixMilli()
	for i, set := range sets {
		if p := set.Options.Producer; p != nil && g.pending(p.ID) {
			if err := g.write(); err != nil {
				return results, fillErrors(errs, g.firstPending, err)
			}
		}
		res, err := g.add(set, leaderEpoch)
		results[i], errs[i] = res, err
	}
	err := g.write()
	if cap(g.buf) <= 4<<20 {
		l.encBuf = g.buf // keep the buffer unless one odd group made it huge
	}
	l.hdrBuf = g.hdrs
	if err != nil {
		// The sets of the failed write are those since the last write
		// that succeeded.
		return results, fillErrors(errs, g.firstPending, err)
	}
	for i, set := range sets {
		if errs[i] != nil {
			continue
		}
		for j := range set.Records {
			set.Records[j].Offset = results[i].BaseOffset + int64(j)
			if set.Records[j].Timestamp == 0 {
				set.Records[j].Timestamp = nowMs
			}
		}
	}
	return results, errs
}

// len is the number of records of the set.
func (set RecordSet) len() int {
	if set.Section != nil {
		return set.Count
	}
	return len(set.Records)
}

// groupWrite is the batches of an AppendMany not yet written.
type groupWrite struct {
	l    *Log
	cfg  Config
	now  time.Time
	buf  []byte
	hdrs []BatchHeader
	// producers are the idempotent producers with a batch in buf.
	producers map[int64]bool
	// added counts the sets seen; firstPending is the first of them not
	// yet written.
	added, firstPending int
}

func (g *groupWrite) pending(producerID int64) bool { return g.producers[producerID] }

// add encodes set as the next batch of the group, or answers it as the
// duplicate of one its producer already wrote.
func (g *groupWrite) add(set RecordSet, leaderEpoch int32) (AppendResult, error) {
	g.added++
	count := set.len()
	if count < 0 {
		return AppendResult{}, fmt.Errorf("%w: %w: a section of %d records", ErrCorruptBatch, ErrCorrupt, count)
	}
	if count == 0 {
		return AppendResult{}, ErrEmptyBatch
	}
	if count > math.MaxInt32 {
		return AppendResult{}, fmt.Errorf("%w: %d records", ErrBatchTooLarge, count)
	}
	if p := set.Options.Producer; p != nil {
		dup, isDup, err := g.l.checkProducer(*p, int32(count))
		if err != nil {
			return AppendResult{}, err
		}
		if isDup {
			return AppendResult{BaseOffset: dup.FirstOffset, LastOffset: dup.LastOffset, Duplicate: true}, nil
		}
	}
	next := g.l.leo.Load()
	if n := len(g.hdrs); n > 0 {
		next = g.hdrs[n-1].NextOffset()
	}
	start := len(g.buf)
	var buf []byte
	var rawSize int
	var err error
	if set.Section != nil {
		buf, rawSize, err = g.l.enc.encodeSection(g.buf, next, leaderEpoch, set.Section, set.Count, g.now.UnixMilli(), set.Options)
	} else {
		buf, rawSize, err = g.l.enc.encode(g.buf, next, leaderEpoch, set.Records, g.now.UnixMilli(), set.Options)
	}
	var h BatchHeader
	if err == nil && rawSize > g.cfg.MaxBatchBytes {
		err = fmt.Errorf("%w: %d bytes, limit %d", ErrBatchTooLarge, rawSize, g.cfg.MaxBatchBytes)
	}
	if err == nil {
		h, err = ParseBatchHeader(buf[start:])
	}
	if err != nil {
		g.buf = buf[:start]
		return AppendResult{}, err
	}
	g.buf = buf
	g.hdrs = append(g.hdrs, h)
	if p := set.Options.Producer; p != nil {
		if g.producers == nil {
			g.producers = map[int64]bool{}
		}
		g.producers[p.ID] = true
	}
	return AppendResult{BaseOffset: next, LastOffset: h.LastOffset()}, nil
}

// write writes the group's pending batches and applies the flush policy.
func (g *groupWrite) write() error {
	if len(g.hdrs) > 0 {
		if err := g.l.checkSync(g.l.appendBatches(g.buf, g.hdrs, g.cfg, g.now)); err != nil {
			return err
		}
	}
	g.buf, g.hdrs = g.buf[:0], g.hdrs[:0]
	clear(g.producers)
	g.firstPending = g.added
	return nil
}

// fillErrors sets err on every set from index from on that has none.
func fillErrors(errs []error, from int, err error) []error {
	for i := from; i < len(errs); i++ {
		if errs[i] == nil {
			errs[i] = err
		}
	}
	return errs
}
