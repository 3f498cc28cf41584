package storage

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// Header is one record header. A nil Value is kept distinct from an empty one.
type Header struct {
	Key   string
	Value []byte
}

// Record is one message of a partition log.
type Record struct {
	Offset    int64 // absolute; set by Append, filled on read
	Timestamp int64 // Unix milliseconds; 0 on Append means "now"
	Key       []byte
	Value     []byte
	Headers   []Header
}

// varintLen is the size of x as a zig-zag varint (binary.PutVarint).
func varintLen(x int64) int {
	ux := uint64(x)<<1 ^ uint64(x>>63)
	return (bits.Len64(ux|1) + 6) / 7
}

// bytesLen is the encoded size of a length-prefixed byte string; nil is -1.
func bytesLen(b []byte) int {
	if b == nil {
		return varintLen(-1)
	}
	return varintLen(int64(len(b))) + len(b)
}

func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

// appendRecord appends r, encoded as in Kafka's v2 format, to dst.
func appendRecord(dst []byte, r *Record, tsDelta, offsetDelta int64) []byte {
	body := 1 + varintLen(tsDelta) + varintLen(offsetDelta) +
		bytesLen(r.Key) + bytesLen(r.Value) + varintLen(int64(len(r.Headers)))
	for i := range r.Headers {
		body += varintLen(int64(len(r.Headers[i].Key))) + len(r.Headers[i].Key) + bytesLen(r.Headers[i].Value)
	}
	dst = binary.AppendVarint(dst, int64(body))
	dst = append(dst, 0) // attributes
	dst = binary.AppendVarint(dst, tsDelta)
	dst = binary.AppendVarint(dst, offsetDelta)
	dst = appendBytes(dst, r.Key)
	dst = appendBytes(dst, r.Value)
	dst = binary.AppendVarint(dst, int64(len(r.Headers)))
	for i := range r.Headers {
		dst = binary.AppendVarint(dst, int64(len(r.Headers[i].Key)))
		dst = append(dst, r.Headers[i].Key...)
		dst = appendBytes(dst, r.Headers[i].Value)
	}
	return dst
}

// recordDecoder walks the records section of one batch (decompressed if
// the batch is compressed) whose CRC has been checked, validating every
// length so that no input can make it read out of bounds.
type recordDecoder struct {
	b         []byte // the records, after the batch header
	p         int
	h         BatchHeader
	n         int32
	prevDelta int64
	maxTs     int64
	// Of the record last returned by next: encoded size, offset, timestamp.
	size   int
	offset int64
	ts     int64
}

func (d *recordDecoder) reset(records []byte, h BatchHeader) {
	*d = recordDecoder{b: records, h: h, prevDelta: -1, maxTs: math.MinInt64}
}

func (d *recordDecoder) more() bool { return d.n < d.h.RecordCount }

func (d *recordDecoder) corrupt(what string) error {
	return fmt.Errorf("%w: batch at offset %d record %d: %s", ErrCorrupt, d.h.BaseOffset, d.n, what)
}

// varintAt decodes the zig-zag varint at b[q:], returning its value and
// size, or size ≤ 0 if it is malformed. One- and two-byte values, the
// common case for lengths and deltas, skip the general decoder.
func varintAt(b []byte, q int) (int64, int) {
	if q >= len(b) {
		return 0, 0
	}
	if x := b[q]; x < 0x80 {
		return int64(x>>1) ^ -int64(x&1), 1
	}
	if q+1 < len(b) && b[q+1] < 0x80 {
		x := uint64(b[q]&0x7f) | uint64(b[q+1])<<7
		return int64(x>>1) ^ -int64(x&1), 2
	}
	return binary.Varint(b[q:])
}

// bytesAt decodes a length-prefixed byte string (length -1 = nil) at
// b[q:], returning it (capacity clipped, aliasing b) and the next position,
// or q < 0 if it does not fit.
func bytesAt(b []byte, q int) ([]byte, int) {
	l, n := varintAt(b, q)
	if n <= 0 || l < -1 || l > int64(len(b)-q-n) {
		return nil, -1
	}
	q += n
	if l == -1 {
		return nil, q
	}
	end := q + int(l)
	return b[q:end:end], end
}

// next decodes the next record. With fill false it only validates and the
// returned Record is empty; offset, ts and size describe it either way.
func (d *recordDecoder) next(fill bool) (Record, error) {
	if fill {
		return d.nextFrom(math.MinInt64)
	}
	return d.nextFrom(math.MaxInt64)
}

// nextFrom decodes the next record, filling in the Record only if its
// offset is at least from, so that records a read skips cost no
// allocation.
func (d *recordDecoder) nextFrom(from int64) (Record, error) {
	var r Record
	length, n := varintAt(d.b, d.p)
	if n <= 0 || length < minRecordSize-1 || length > int64(len(d.b)-d.p-n) {
		return r, d.corrupt("bad record length")
	}
	start := d.p
	body := d.b[d.p+n : d.p+n+int(length)]
	d.p += n + int(length)
	d.size = d.p - start
	// body[0] is the record attributes byte, unused.
	tsDelta, n1 := varintAt(body, 1)
	offDelta, n2 := varintAt(body, 1+max(n1, 0))
	if n1 <= 0 || n2 <= 0 {
		return r, d.corrupt("bad timestamp or offset delta")
	}
	if offDelta <= d.prevDelta || offDelta > int64(d.h.LastOffsetDelta) {
		return r, d.corrupt("offset delta out of order")
	}
	d.prevDelta = offDelta
	ts := d.h.FirstTimestamp + tsDelta
	if d.h.Attributes&logAppendTimeBit != 0 {
		// Every record of a LogAppendTime batch has the time the broker
		// wrote into maxTimestamp (Kafka's rule).
		ts = d.h.MaxTimestamp
	}
	d.maxTs = max(d.maxTs, ts)
	d.offset, d.ts = d.h.BaseOffset+offDelta, ts
	key, q := bytesAt(body, 1+n1+n2)
	if q < 0 {
		return r, d.corrupt("bad key")
	}
	value, q := bytesAt(body, q)
	if q < 0 {
		return r, d.corrupt("bad value")
	}
	nh, n := varintAt(body, q)
	if n <= 0 || nh < 0 || nh > int64(len(body)-q-n)/2 {
		return r, d.corrupt("bad header count")
	}
	q += n
	fill := d.offset >= from
	if fill {
		r = Record{Offset: d.offset, Timestamp: ts, Key: key, Value: value}
		if nh > 0 {
			r.Headers = make([]Header, nh)
		}
	}
	for i := range int(nh) {
		var hk, hv []byte
		if hk, q = bytesAt(body, q); q < 0 || hk == nil {
			return r, d.corrupt("bad header key")
		}
		if hv, q = bytesAt(body, q); q < 0 {
			return r, d.corrupt("bad header value")
		}
		if fill {
			r.Headers[i] = Header{Key: string(hk), Value: hv}
		}
	}
	if q != len(body) {
		return r, d.corrupt("record length does not match its fields")
	}
	d.n++
	return r, nil
}

// finish checks what can only be checked after the last record.
func (d *recordDecoder) finish() error {
	switch {
	case d.p != len(d.b):
		return d.corrupt("bytes after the last record")
	case d.prevDelta != int64(d.h.LastOffsetDelta):
		return d.corrupt("last offset delta does not match the records")
	case d.maxTs != d.h.MaxTimestamp:
		return d.corrupt("max timestamp does not match the records")
	}
	return nil
}
