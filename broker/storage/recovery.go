package storage

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// recover rebuilds the segment's indexes from its log, verifying every
// batch: header, CRC, record structure, and that offsets continue from the
// segment's base. The log is cut at the first batch that fails, so a torn
// or corrupt tail disappears; it reports whether bytes were cut. Each valid
// batch is passed to visit. limit bounds the records of a compressed batch
// decompressed (Config.storedLimit).
func (s *segment) recover(interval, limit int, visit func(BatchHeader)) (cut bool, err error) {
	fi, err := s.log.Stat()
	if err != nil {
		return false, err
	}
	s.index, s.timeIndex = newOffsetIndex(s.base), newTimeIndex(s.base)
	s.maxTs.Store(math.MinInt64)
	s.bytesSinceIndex = 0
	expect, end := s.base, int64(0)
	var scratch []byte
	sc := newBatchScanner(s.log, 0, fi.Size(), maxReadChunk, true)
	for {
		pos, h, b, err := sc.next()
		if err == io.EOF {
			break
		}
		if err != nil && !errors.Is(err, ErrCorrupt) {
			return false, err
		}
		if err != nil || h.BaseOffset != expect || !s.fits(h.NextOffset()) {
			break
		}
		if _, scratch, err = verifyBatch(b, limit, scratch); err != nil {
			break
		}
		s.indexBatch(pos, h, interval)
		if pos == 0 {
			s.rollBase = h.MaxTimestamp
		}
		if visit != nil {
			visit(h)
		}
		expect, end = h.NextOffset(), pos+int64(h.Size())
	}
	if end < fi.Size() {
		if err := s.log.Truncate(end); err != nil {
			return false, err
		}
		cut = true
	}
	s.size.Store(end)
	s.next.Store(expect)
	s.indexDirty, s.unsynced = true, true
	return cut, nil
}

// loadIndexes reads the index files of a segment that needs no recovery,
// checks them against the log and finds the segment's end by scanning from
// the last indexed batch, completing the offset index on the way. An error
// wrapping errIndexCorrupt or ErrCorrupt means the segment must be
// recovered.
func (s *segment) loadIndexes(interval int) error {
	fi, err := s.log.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	ib, err := readIndexFile(segmentPath(s.dir, s.base, indexSuffix), size)
	if err != nil {
		return err
	}
	tb, err := readIndexFile(segmentPath(s.dir, s.base, timeIndexSuffix), size)
	if err != nil {
		return err
	}
	if s.index, err = parseOffsetIndex(ib, s.base, size); err != nil {
		return err
	}
	if s.timeIndex, err = parseTimeIndex(tb, s.base); err != nil {
		return err
	}
	lastTs, lastX, hasTime := s.timeIndex.last()
	lastOff, lastPos, ok := s.index.last()
	if !ok {
		if hasTime {
			return fmt.Errorf("%w: time index of an empty segment", errIndexCorrupt)
		}
		return nil
	}
	if !hasTime {
		return fmt.Errorf("%w: empty time index", errIndexCorrupt)
	}
	if err := s.spotCheckIndex(); err != nil {
		return err
	}
	// Every cleanly closed or sealed segment's time index ends with
	// (largest timestamp, next offset); the tail scan checks the second.
	s.maxTs.Store(lastTs)
	expect := lastOff
	sc := newBatchScanner(s.log, lastPos, size, minReadChunk, true)
	for {
		pos, h, _, err := sc.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if h.BaseOffset != expect || !s.fits(h.NextOffset()) {
			return fmt.Errorf("%w: batch at byte %d has offset %d, want %d", ErrCorrupt, pos, h.BaseOffset, expect)
		}
		if pos == lastPos {
			s.bytesSinceIndex = h.Size()
			s.maxTs.Store(max(lastTs, h.MaxTimestamp))
		} else {
			s.indexBatch(pos, h, interval)
		}
		expect = h.NextOffset()
	}
	if lastX != expect || s.maxTs.Load() != lastTs {
		return fmt.Errorf("%w: time index ends at offset %d, log at %d", errIndexCorrupt, lastX, expect)
	}
	s.size.Store(size)
	s.next.Store(expect)
	if h, err := s.readHeader(0); err == nil {
		s.rollBase = h.MaxTimestamp
	}
	return nil
}

// verifyTail checks the CRC and records of every batch from the last
// index entry to the end of the segment; limit is as for recover.
func (s *segment) verifyTail(limit int) error {
	_, pos, ok := s.index.last()
	if !ok {
		return nil
	}
	var scratch []byte
	sc := newBatchScanner(s.log, pos, s.size.Load(), minReadChunk, true)
	for {
		_, _, b, err := sc.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if _, scratch, err = verifyBatch(b, limit, scratch); err != nil {
			return err
		}
	}
}

// readIndexFile reads an index file; a missing one is empty only when the
// log is.
func readIndexFile(path string, logSize int64) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if logSize == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: %s missing", errIndexCorrupt, path)
	}
	return b, err
}

// readHeader reads the batch header at pos.
func (s *segment) readHeader(pos int64) (BatchHeader, error) {
	var b [BatchHeaderSize]byte
	if _, err := s.log.ReadAt(b[:], pos); err != nil {
		return BatchHeader{}, err
	}
	return ParseBatchHeader(b[:])
}

// spotCheckIndex reads the batch headers at a few evenly spaced index
// entries: garbage that happens to be sorted does not survive it.
func (s *segment) spotCheckIndex() error {
	const samples = 8
	n := s.index.len()
	for k := range min(n, samples) {
		off, pos := s.index.entry(k * (n - 1) / max(min(n, samples)-1, 1))
		h, err := s.readHeader(pos)
		if err != nil || h.BaseOffset != off {
			return fmt.Errorf("%w: entry (%d, %d) does not point at its batch", errIndexCorrupt, off, pos)
		}
	}
	return nil
}
