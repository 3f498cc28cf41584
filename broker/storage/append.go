package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// Append writes records as one uncompressed batch stamped with
// leaderEpoch and returns the offsets of its first and last record. It
// sets Offset on each of the caller's records, and Timestamp where it was
// 0. A negative epoch writes a batch that the leader-epoch cache ignores.
func (l *Log) Append(records []Record, leaderEpoch int32) (base, last int64, err error) {
	res, err := l.AppendRecords(records, leaderEpoch, BatchOptions{})
	if err != nil {
		return -1, -1, err
	}
	return res.BaseOffset, res.LastOffset, nil
}

// AppendResult is where an appended batch is in the log.
type AppendResult struct {
	BaseOffset, LastOffset int64
	// Duplicate is set when the batch is a retry of one of its idempotent
	// producer's last five batches: nothing was written, and the offsets
	// are those the batch got when it was first appended.
	Duplicate bool
}

// AppendRecords is Append with the batch written as opts says:
// compressed, and stamped with an idempotent producer, whose retried
// batch is not written twice (see AppendResult.Duplicate) and whose
// batches must continue its sequence (ErrOutOfOrderSequence) in its
// latest epoch (ErrInvalidProducerEpoch). max.message.bytes bounds the
// batch's size uncompressed.
func (l *Log) AppendRecords(records []Record, leaderEpoch int32, opts BatchOptions) (res AppendResult, err error) {
	if len(records) == 0 {
		return AppendResult{}, ErrEmptyBatch
	}
	if len(records) > math.MaxInt32 {
		return AppendResult{}, fmt.Errorf("%w: %d records", ErrBatchTooLarge, len(records))
	}
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if err := l.writable(); err != nil {
		return AppendResult{}, err
	}
	defer func() { err = l.checkSync(err) }()
	cfg := l.Config()
	if leaderEpoch >= 0 && leaderEpoch < l.epochs.latest() {
		return AppendResult{}, fmt.Errorf("%w: %d < %d", ErrStaleEpoch, leaderEpoch, l.epochs.latest())
	}
	if opts.Producer != nil {
		dup, isDup, err := l.checkProducer(*opts.Producer, int32(len(records)))
		if err != nil {
			return AppendResult{}, err
		}
		if isDup {
			for i := range records {
				records[i].Offset = dup.FirstOffset + int64(i)
			}
			return AppendResult{BaseOffset: dup.FirstOffset, LastOffset: dup.LastOffset, Duplicate: true}, nil
		}
	}
	base := l.leo.Load()
	now := time.Now()
	nowMs := now.UnixMilli()
	buf, rawSize, err := l.enc.encode(l.encBuf[:0], base, leaderEpoch, records, nowMs, opts)
	if cap(buf) <= 4<<20 {
		l.encBuf = buf // keep the buffer unless one odd batch made it huge
	}
	if err != nil {
		return AppendResult{}, err
	}
	if rawSize > cfg.MaxBatchBytes {
		return AppendResult{}, fmt.Errorf("%w: %d bytes, limit %d", ErrBatchTooLarge, rawSize, cfg.MaxBatchBytes)
	}
	h, err := ParseBatchHeader(buf)
	if err != nil {
		return AppendResult{}, err
	}
	l.hdrBuf = append(l.hdrBuf[:0], h)
	if err := l.appendBatches(buf, l.hdrBuf, cfg, now); err != nil {
		return AppendResult{}, err
	}
	for i := range records {
		records[i].Offset = base + int64(i)
		if records[i].Timestamp == 0 {
			records[i].Timestamp = nowMs
		}
	}
	return AppendResult{BaseOffset: base, LastOffset: h.LastOffset()}, nil
}

// AppendBatch appends one batch a producer encoded (a Kafka producer's,
// for one), stored as it is except for its base offset, set to the log
// end offset, and its partition leader epoch, set to leaderEpoch: both
// lie outside the CRC, and batch is changed in place. Before anything is
// written the batch is checked as Kafka's LogValidator checks a client's:
// exactly one whole v2 batch, its CRC, its records decoding to the count
// its header gives with offset deltas 0, 1, 2, …, no more than
// max.message.bytes uncompressed (ErrBatchTooLarge), not transactional,
// not a control batch and not LogAppendTime (ErrInvalidRecord); malformed
// bytes are ErrCorruptBatch (wrapping ErrCorrupt). An idempotent batch is then deduplicated and
// sequence-checked as AppendRecords does.
func (l *Log) AppendBatch(batch []byte, leaderEpoch int32) (res AppendResult, err error) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if err := l.writable(); err != nil {
		return AppendResult{}, err
	}
	defer func() { err = l.checkSync(err) }()
	cfg := l.Config()
	h, err := l.validateProduced(batch, cfg)
	if errors.Is(err, ErrCorrupt) {
		return AppendResult{}, fmt.Errorf("%w: %w", ErrCorruptBatch, err)
	}
	if err != nil {
		return AppendResult{}, err
	}
	if leaderEpoch >= 0 && leaderEpoch < l.epochs.latest() {
		return AppendResult{}, fmt.Errorf("%w: %d < %d", ErrStaleEpoch, leaderEpoch, l.epochs.latest())
	}
	if h.ProducerID >= 0 {
		p := Producer{ID: h.ProducerID, Epoch: h.ProducerEpoch, BaseSequence: h.BaseSequence}
		dup, isDup, err := l.checkProducer(p, h.LastOffsetDelta+1)
		if err != nil {
			return AppendResult{}, err
		}
		if isDup {
			return AppendResult{BaseOffset: dup.FirstOffset, LastOffset: dup.LastOffset, Duplicate: true}, nil
		}
	}
	h.BaseOffset, h.LeaderEpoch = l.leo.Load(), leaderEpoch
	binary.BigEndian.PutUint64(batch[posBaseOffset:], uint64(h.BaseOffset))
	binary.BigEndian.PutUint32(batch[posEpoch:], uint32(leaderEpoch))
	l.hdrBuf = append(l.hdrBuf[:0], h)
	if err := l.appendBatches(batch, l.hdrBuf, cfg, time.Now()); err != nil {
		return AppendResult{}, err
	}
	return AppendResult{BaseOffset: h.BaseOffset, LastOffset: h.LastOffset()}, nil
}

// validateProduced checks a producer's batch for AppendBatch and returns
// its header. Callers hold writeMu (the decompression buffer is the
// writer's).
func (l *Log) validateProduced(batch []byte, cfg Config) (BatchHeader, error) {
	h, err := ParseBatchHeader(batch)
	if err != nil {
		return h, err
	}
	if h.Size() != len(batch) {
		return h, fmt.Errorf("%w: a batch of %d bytes in %d bytes; a produce writes exactly one batch", ErrCorrupt, h.Size(), len(batch))
	}
	switch {
	case h.Attributes&transactionalBit != 0:
		return h, fmt.Errorf("%w: transactional batches are not supported", ErrInvalidRecord)
	case h.Attributes&controlBit != 0:
		return h, fmt.Errorf("%w: control batches are not supported", ErrInvalidRecord)
	case h.Attributes&logAppendTimeBit != 0:
		return h, fmt.Errorf("%w: a producer's batch carries CreateTime timestamps", ErrInvalidRecord)
	case h.LastOffsetDelta != h.RecordCount-1:
		return h, fmt.Errorf("%w: %d records with last offset delta %d", ErrInvalidRecord, h.RecordCount, h.LastOffsetDelta)
	case h.ProducerID >= 0 && (h.ProducerEpoch < 0 || h.BaseSequence < 0):
		return h, fmt.Errorf("%w: producer %d with epoch %d and sequence %d", ErrInvalidProducer, h.ProducerID, h.ProducerEpoch, h.BaseSequence)
	}
	if err := checkCRC(batch, h); err != nil {
		return h, err
	}
	records, scratch, err := recordsOf(batch, h, l.scratch, cfg.MaxBatchBytes-BatchHeaderSize)
	l.keepScratch(scratch)
	if err != nil {
		return h, err
	}
	// Records decode and their offset deltas strictly increase up to
	// lastOffsetDelta; with recordCount-1 == lastOffsetDelta that makes
	// them 0, 1, 2, ….
	var d recordDecoder
	d.reset(records, h)
	for d.more() {
		if _, err := d.next(false); err != nil {
			return h, err
		}
	}
	return h, d.finish()
}

// AppendRaw appends batches encoded by a leader, offsets and epochs
// included, as a follower does. Every batch must be whole with a CRC that
// matches, the first must start at the log end offset and each must
// follow the one before, and no epoch may be older than the log's latest;
// otherwise nothing is written. It returns the last offset now in the
// log.
//
// The records are not decoded again, as Kafka's followers do not: the
// leader verified them when it took the batch (AppendBatch, or encoded
// them itself), and the CRC, which covers every byte from the attributes
// on, shows the copy is the one the leader verified. Decompressing every
// batch a second time on each follower was the largest cost of replicating
// compressed Kafka batches (docs/benchmarks.md). Recovery after an unclean
// stop still decodes every batch it checks.
func (l *Log) AppendRaw(batches []byte) (last int64, err error) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if err := l.writable(); err != nil {
		return -1, err
	}
	defer func() { err = l.checkSync(err) }()
	cfg := l.Config()
	expect, latest := l.leo.Load(), l.epochs.latest()
	hdrs := l.hdrBuf[:0]
	for p := 0; p < len(batches); {
		h, err := checkBatch(batches[p:])
		if err != nil {
			return -1, err
		}
		if h.BaseOffset != expect {
			return -1, fmt.Errorf("%w: batch at offset %d, log expects %d", ErrNotContiguous, h.BaseOffset, expect)
		}
		if h.LeaderEpoch >= 0 && h.LeaderEpoch < latest {
			return -1, fmt.Errorf("%w: batch at offset %d has epoch %d < %d", ErrStaleEpoch, h.BaseOffset, h.LeaderEpoch, latest)
		}
		latest = max(latest, h.LeaderEpoch)
		hdrs = append(hdrs, h)
		p += h.Size()
		expect = h.NextOffset()
	}
	l.hdrBuf = hdrs
	if len(hdrs) > 0 {
		if err := l.appendBatches(batches, hdrs, cfg, time.Now()); err != nil {
			return -1, err
		}
	}
	return expect - 1, nil
}

// appendBatches writes verified, contiguous batches, rolling segments as
// needed, records new leader epochs and applies the fsync policy.
func (l *Log) appendBatches(data []byte, hdrs []BatchHeader, cfg Config, now time.Time) error {
	epochChanged := false
	for _, h := range hdrs {
		if h.LeaderEpoch > l.epochs.latest() {
			epochChanged = l.epochs.assign(h.LeaderEpoch, h.BaseOffset) || epochChanged
		}
	}
	if epochChanged {
		// Persisted before the data: after a crash the cache may know an
		// epoch whose batch was lost, which loading trims, but never miss
		// one whose batch survived.
		if err := l.epochs.persist(l.dir); err != nil {
			return err
		}
	}
	var messages int64
	producers := false
	for start, off := 0, 0; start < len(hdrs); {
		if l.shouldRoll(hdrs[start], cfg, now) {
			if err := l.roll(hdrs[start].BaseOffset); err != nil {
				return err
			}
		}
		s := l.active()
		if s.size.Load() == 0 {
			s.rollBase = now.UnixMilli()
		}
		end, n := start, 0
		for end < len(hdrs) {
			h := hdrs[end]
			if end > start && (s.size.Load()+int64(n+h.Size()) > cfg.SegmentBytes || !s.fits(h.NextOffset())) {
				break
			}
			n += h.Size()
			messages += int64(h.RecordCount)
			end++
		}
		if err := s.append(data[off:off+n], hdrs[start:end], cfg.IndexIntervalBytes); err != nil {
			return err
		}
		l.leo.Store(hdrs[end-1].NextOffset())
		for _, h := range hdrs[start:end] {
			if h.ProducerID >= 0 {
				l.producers.update(h, now.UnixMilli())
				producers = true
			}
		}
		start, off = end, off+n
	}
	if producers {
		l.afterProducerAppend(cfg, now)
	}
	return l.afterAppend(messages, cfg)
}

// shouldRoll reports whether h must start a new segment: the active one is
// full (segment.bytes), old enough (segment.ms) or cannot index h's
// offsets. Age counts from the wall-clock time of the segment's first
// append, or for a segment found on disk at Open from its first batch's
// timestamp. (Kafka counts from record timestamps alone, which makes a
// topic fed with old timestamps roll on every batch.)
func (l *Log) shouldRoll(h BatchHeader, cfg Config, now time.Time) bool {
	s := l.active()
	size := s.size.Load()
	if size == 0 {
		return false
	}
	return size+int64(h.Size()) > cfg.SegmentBytes ||
		(cfg.SegmentMs > 0 && now.UnixMilli()-s.rollBase >= cfg.SegmentMs.Milliseconds()) ||
		!s.fits(h.NextOffset())
}

// roll starts a new segment at base. The finished segment gets its final
// time index entry and its index files, is served from mappings from now
// on, and is fsynced in the background; the recovery point moves past it
// once that is done.
func (l *Log) roll(base int64) error {
	// The producer state as of base, so that Open replays at most the
	// new segment (base is the log end offset here).
	if err := l.snapshotProducers(false); err != nil {
		return err
	}
	old := l.active()
	old.closeTimeIndex()
	if err := old.writeIndexes(); err != nil {
		return err
	}
	old.mapIndexes()
	s, err := createSegment(l.dir, base)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.segs = append(l.segs, s)
	l.mu.Unlock()
	l.unflushed = 0
	l.syncInBackground(old, base)
	return nil
}
