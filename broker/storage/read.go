package storage

import (
	"errors"
	"fmt"
	"io"
	"slices"
)

// Read returns records with offsets in [offset, maxOffset), at most
// maxRecords of them and, counting each record's encoded size, at most
// maxBytes, except that the first available record is always returned
// however large (Kafka's rule). maxOffset < 0 means the log end offset;
// maxBytes ≤ 0 and maxRecords ≤ 0 mean no limit. The read continues across
// segment boundaries. Key, Value and header values of the records share
// freshly allocated buffers and stay valid.
//
// An offset outside [LogStartOffset, LogEndOffset] fails with
// *OffsetOutOfRangeError; offset == LogEndOffset returns no records. A
// batch that fails its CRC or does not decode is never returned: the
// records before it are, and a read that starts in it fails with an error
// wrapping ErrCorrupt.
func (l *Log) Read(offset, maxOffset int64, maxBytes, maxRecords int) ([]Record, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	end, err := l.readEnd(offset, maxOffset)
	if err != nil || offset >= end {
		return nil, err
	}
	c := recordCollector{from: offset, end: end, maxBytes: maxBytes, maxRecords: maxRecords, limit: l.Config().storedLimit()}
	err = l.scan(offset, end, readHint(maxBytes, maxRecords), nil, c.add)
	if err != nil && errors.Is(err, ErrCorrupt) && len(c.out) > 0 {
		return c.out, nil
	}
	return c.out, err
}

// estimate sizes the result from the first batch's bytes per record.
func (c *recordCollector) estimate(h BatchHeader) int64 {
	n := c.end - c.from
	if c.maxRecords > 0 {
		n = min(n, int64(c.maxRecords))
	}
	if c.maxBytes > 0 {
		n = min(n, int64(c.maxBytes)/max(int64(h.Size())/int64(h.RecordCount), 1)+1)
	}
	return min(n, 1<<16)
}

// readHint guesses how many bytes of batches a read will need, so that
// the first chunk read from the file usually covers it: a small record
// limit means little, a byte limit means about that much plus the distance
// from the index entry.
func readHint(maxBytes, maxRecords int) int {
	switch {
	case maxRecords > 0 && maxRecords <= 16:
		return minReadChunk
	case maxBytes > 0:
		return maxBytes + maxBytes/8 + minReadChunk
	}
	return maxReadChunk
}

// recordCollector gathers the records of a Read batch by batch.
type recordCollector struct {
	from, end            int64
	maxBytes, maxRecords int
	limit                int // decompressed records of one batch
	bytes                int
	out                  []Record
}

// add decodes the records of one batch that fall in range, within the
// limits; it reports whether the next batch is wanted. A batch that fails
// its CRC or its decoding contributes nothing. A compressed batch is
// decompressed into a buffer of its own, which its records alias.
func (c *recordCollector) add(b []byte, h BatchHeader) (bool, error) {
	if err := checkCRC(b, h); err != nil {
		return false, err
	}
	records, _, err := recordsOf(b, h, nil, c.limit)
	if err != nil {
		return false, err
	}
	if c.out == nil {
		c.out = make([]Record, 0, c.estimate(h))
	}
	mark, markBytes := len(c.out), c.bytes
	var d recordDecoder
	d.reset(records, h)
	for d.more() {
		r, err := d.nextFrom(c.from)
		if err != nil {
			c.out, c.bytes = c.out[:mark], markBytes
			return false, err
		}
		if r.Offset < c.from {
			continue
		}
		if r.Offset >= c.end || (c.maxBytes > 0 && len(c.out) > 0 && c.bytes+d.size > c.maxBytes) {
			return false, nil
		}
		c.out = append(c.out, r)
		c.bytes += d.size
		if c.maxRecords > 0 && len(c.out) >= c.maxRecords {
			return false, nil
		}
	}
	if err := d.finish(); err != nil {
		c.out, c.bytes = c.out[:mark], markBytes
		return false, err
	}
	return true, nil
}

// ReadRaw returns whole encoded batches, starting with the one holding
// offset, for a follower's fetch. Only batches that end below maxOffset
// (< 0: the log end offset) are included, so records above a high
// watermark never leave; maxBytes (≤ 0: no limit) caps the total except
// that the first batch is always returned. Every batch's CRC is checked.
func (l *Log) ReadRaw(offset, maxOffset int64, maxBytes int) ([]byte, error) {
	out, err := l.ReadRawWith(offset, maxOffset, maxBytes, nil)
	return slices.Clip(out), err
}

// ReadRawWith is ReadRaw reading into the buffers alloc gives (of at
// least n bytes; nil: made), which only the batches returned point into,
// for a caller that gives them back once it has sent the batches. The
// batches are not clipped: appending to them writes into what remains of
// the caller's buffer.
func (l *Log) ReadRawWith(offset, maxOffset int64, maxBytes int, alloc func(n int) []byte) ([]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	end, err := l.readEnd(offset, maxOffset)
	if err != nil || offset >= end {
		return nil, err
	}
	var out []byte
	hint := maxReadChunk
	if maxBytes > 0 {
		hint = maxBytes + minReadChunk
	}
	err = l.scan(offset, end, hint, alloc, func(b []byte, h BatchHeader) (bool, error) {
		if err := checkCRC(b, h); err != nil {
			return false, err
		}
		if h.LastOffset() >= end || (maxBytes > 0 && len(out) > 0 && len(out)+len(b) > maxBytes) {
			return false, nil
		}
		out = extend(out, b)
		return true, nil
	})
	if err != nil && errors.Is(err, ErrCorrupt) && len(out) > 0 {
		err = nil
	}
	return out, err
}

// readEnd checks offset against the log's range and returns where a read
// from it stops. Callers hold mu shared.
func (l *Log) readEnd(offset, maxOffset int64) (int64, error) {
	if l.closed {
		return 0, ErrClosed
	}
	start, leo := l.logStart.Load(), l.leo.Load()
	if offset < start || offset > leo {
		return 0, &OffsetOutOfRangeError{Offset: offset, LogStartOffset: start, LogEndOffset: leo}
	}
	if maxOffset < 0 || maxOffset > leo {
		maxOffset = leo
	}
	return maxOffset, nil
}

// scan calls fn with every whole batch that holds offsets in [offset, end),
// in order, across segments, until fn returns false or an error; alloc
// gives the buffers the batches are read into (nil: made). Callers hold
// mu shared.
func (l *Log) scan(offset, end int64, hint int, alloc func(int) []byte, fn func([]byte, BatchHeader) (bool, error)) error {
	for i := l.segmentFor(offset); i < len(l.segs) && l.segs[i].base < end; i++ {
		more, err := scanSegment(l.segs[i], offset, end, hint, alloc, fn)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// scanSegment calls fn with the batches of s holding offsets in
// [offset, end), starting from the sparse index's nearest entry below
// offset, reading about hint bytes at first. It reports whether fn wants
// more.
//
// Batches skipped on the way are judged by their headers alone, as in
// Kafka. Offsets within a segment have no gaps, so landing on a batch that
// starts past an offset inside the segment means a damaged header misled
// the scan: that is reported as corruption rather than silently skipping
// records.
func scanSegment(s *segment, offset, end int64, hint int, alloc func(int) []byte, fn func([]byte, BatchHeader) (bool, error)) (bool, error) {
	pos, size := int64(0), s.size.Load()
	if offset > s.base {
		pos = s.startOf(offset, size)
	}
	first := offset >= s.base
	sc := newBatchScanner(s.log, pos, size, hint, false)
	sc.alloc = alloc
	for {
		_, h, b, err := sc.next()
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if h.LastOffset() < offset {
			continue
		}
		if first && h.BaseOffset > offset {
			return false, fmt.Errorf("%w: offset %d missing from segment %d", ErrCorrupt, offset, s.base)
		}
		first = false
		if h.BaseOffset >= end {
			return false, nil
		}
		if more, err := fn(b, h); err != nil || !more {
			return false, err
		}
	}
}

// extend appends b to out without copying when b already follows out in
// the same read buffer, which is the case for consecutive batches of one
// chunk; otherwise it copies.
func extend(out, b []byte) []byte {
	if len(out) == 0 {
		return b
	}
	if len(out) < cap(out) && len(b) > 0 && &out[:len(out)+1][len(out)] == &b[0] {
		return out[:len(out)+len(b)]
	}
	return append(slices.Clip(out), b...)
}
