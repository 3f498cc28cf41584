package storage

import (
	"encoding/binary"
	"fmt"
	"math"
)

// A records section on its own: records one after the other, each in
// Kafka's v2 record encoding, as a batch with base offset and base
// timestamp 0 holds them after its header — each record's offset delta is
// its index and its timestamp delta its Timestamp. A broker passes a
// produce's records on to their leader in this form (broker/core), so the
// leader reads keys and values in place.

// AppendSection appends recs to dst as a records section.
func AppendSection(dst []byte, recs []Record) []byte {
	for i := range recs {
		dst = AppendSectionRecord(dst, &recs[i], i)
	}
	return dst
}

// AppendSectionRecord appends r to dst as record index of a records
// section, for a caller that holds its records in another form.
func AppendSectionRecord(dst []byte, r *Record, index int) []byte {
	return appendRecord(dst, r, r.Timestamp, int64(index))
}

// DecodeSection decodes the count records of a section AppendSection
// encoded, refusing with ErrCorrupt any other number of records, bytes
// after the last one, or an offset delta that is not the record's index.
// Keys, values and header values alias b; Offset is each record's index.
func DecodeSection(b []byte, count int) ([]Record, error) {
	if count < 0 || count > len(b)/minRecordSize {
		return nil, fmt.Errorf("%w: %d records in %d bytes", ErrCorrupt, count, len(b))
	}
	if count == 0 {
		if len(b) > 0 {
			return nil, fmt.Errorf("%w: %d bytes after the last record", ErrCorrupt, len(b))
		}
		return []Record{}, nil
	}
	var d recordDecoder
	d.reset(b, BatchHeader{RecordCount: int32(count), LastOffsetDelta: int32(count - 1)})
	out := make([]Record, 0, count)
	for d.more() {
		r, err := d.next(true)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if d.p != len(b) {
		return nil, d.corrupt("bytes after the last record")
	}
	if d.prevDelta != int64(count-1) {
		return nil, d.corrupt("offset deltas do not count the records")
	}
	return out, nil
}

// encodeSection appends one batch holding the count records of section,
// a records section as AppendSection encodes it, to dst: every record
// checked as DecodeSection checks it, then written as it came but for its
// timestamp, which becomes a delta from the first record's (a zero
// timestamp is now). The leader of a partition writes the records another
// broker passed on to it this way, without decoding them into Records and
// encoding them again. It returns the extended slice and the batch's size
// uncompressed, which max.message.bytes bounds; on error dst is returned
// as it was. A malformed section is ErrCorruptBatch, wrapping ErrCorrupt.
func (e *batchEncoder) encodeSection(dst []byte, baseOffset int64, leaderEpoch int32, section []byte, count int, now int64, opts BatchOptions) ([]byte, int, error) {
	if count == 0 {
		return dst, 0, ErrEmptyBatch
	}
	if baseOffset < 0 || !opts.Compression.valid() {
		return dst, 0, fmt.Errorf("storage: cannot encode a batch at offset %d with compression %d", baseOffset, opts.Compression)
	}
	first, maxTs, err := checkSection(section, count, now)
	if err != nil {
		return dst, 0, fmt.Errorf("%w: %w", ErrCorruptBatch, err)
	}
	start := len(dst)
	dst = append(dst, make([]byte, BatchHeaderSize)...)
	out := e.recordsBuffer(dst, opts)
	outStart := len(out)
	for p := 0; p < len(section); {
		// checkSection has checked every length: this walk only reads.
		length, n := varintAt(section, p)
		body := section[p+n : p+n+int(length)]
		p += n + int(length)
		ts, n1 := varintAt(body, 1)
		if ts == 0 {
			ts = now
		}
		rest := body[1+n1:] // offset delta, key, value, headers
		delta := ts - first
		out = binary.AppendVarint(out, int64(1+varintLen(delta)+len(rest)))
		out = append(out, body[0])
		out = binary.AppendVarint(out, delta)
		out = append(out, rest...)
	}
	return e.finish(dst, start, out, outStart, baseOffset, leaderEpoch, count, first, maxTs, opts)
}

// checkSection checks the count records of section as DecodeSection does,
// without decoding them, and returns the first and the largest of their
// timestamps, a zero timestamp counting as now.
func checkSection(section []byte, count int, now int64) (first, maxTs int64, err error) {
	if count < 0 || count > len(section)/minRecordSize || count > math.MaxInt32 {
		return 0, 0, fmt.Errorf("%w: %d records in %d bytes", ErrCorrupt, count, len(section))
	}
	var d recordDecoder
	d.reset(section, BatchHeader{RecordCount: int32(count), LastOffsetDelta: int32(count - 1)})
	for d.more() {
		if _, err := d.next(false); err != nil {
			return 0, 0, err
		}
		ts := d.ts
		if ts == 0 {
			ts = now
		}
		if d.n == 1 {
			first, maxTs = ts, ts
		}
		maxTs = max(maxTs, ts)
	}
	if d.p != len(section) {
		return 0, 0, d.corrupt("bytes after the last record")
	}
	return first, maxTs, nil
}
