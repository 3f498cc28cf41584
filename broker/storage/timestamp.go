package storage

// OffsetForTimestamp returns the first offset at or after the log start
// whose record has a timestamp ≥ ts, or LogEndOffset if there is none.
// (Kafka's special values -1 "latest" and -2 "earliest" are the caller's
// to map onto LogEndOffset and LogStartOffset.)
func (l *Log) OffsetForTimestamp(ts int64) (int64, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return -1, ErrClosed
	}
	start, end := l.logStart.Load(), l.leo.Load()
	found := end
	limit := l.Config().storedLimit()
	var scratch []byte
	visit := func(b []byte, h BatchHeader) (bool, error) {
		// The header's timestamps are trusted only once the CRC passes.
		if err := checkCRC(b, h); err != nil {
			return false, err
		}
		if h.MaxTimestamp < ts {
			return true, nil
		}
		records, buf, err := recordsOf(b, h, scratch, limit)
		if err != nil {
			return false, err
		}
		scratch = buf
		var d recordDecoder
		d.reset(records, h)
		for d.more() {
			if _, err := d.next(false); err != nil {
				return false, err
			}
			if d.offset >= start && d.offset < end && d.ts >= ts {
				found = d.offset
				return false, nil
			}
		}
		return true, nil
	}
	for i := l.segmentFor(start); i < len(l.segs) && found == end; i++ {
		s := l.segs[i]
		// Segments are searched in offset order; the time index lets the
		// scan skip the part of a segment that is entirely older than ts.
		if s.maxTs.Load() < ts {
			continue
		}
		if _, err := scanSegment(s, max(start, s.timeIndex.lookup(ts)), end, minReadChunk, nil, visit); err != nil {
			return -1, err
		}
	}
	return found, nil
}
