package storage

import (
	"fmt"
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
}

// AppendRecords is Append with the batch written as opts says
// (compressed, for one). max.message.bytes bounds the batch's size
// uncompressed.
func (l *Log) AppendRecords(records []Record, leaderEpoch int32, opts BatchOptions) (res AppendResult, err error) {
	if len(records) == 0 {
		return AppendResult{}, ErrEmptyBatch
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

// AppendRaw appends batches encoded by a leader, offsets and epochs
// included, as a follower does. Every batch is verified (CRC and records),
// the first must start at the log end offset and each must follow the one
// before, and no epoch may be older than the log's latest; otherwise
// nothing is written. It returns the last offset now in the log.
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
		h, scratch, err := verifyBatch(batches[p:], cfg.storedLimit(), l.scratch)
		l.keepScratch(scratch)
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
		start, off = end, off+n
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
