package storage

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

// BatchHeaderSize is the fixed size of a batch header in bytes.
const BatchHeaderSize = 46

// Byte positions of the header fields (big-endian, as in Kafka).
const (
	posBaseOffset  = 0  // int64
	posLength      = 8  // int32: bytes after this field
	posEpoch       = 12 // int32
	posCRC         = 16 // uint32: CRC32C of bytes [posAttributes, end)
	posAttributes  = 20 // int16
	posLastDelta   = 22 // int32
	posFirstTs     = 26 // int64
	posMaxTs       = 34 // int64
	posRecordCount = 42 // int32

	// lengthPrefix is the part of the header that batchLength does not count.
	lengthPrefix = posLength + 4
	// minRecordSize is the smallest encoded record: seven one-byte fields.
	minRecordSize = 7
	// compressionMask selects the attribute bits that name a codec; only 0
	// (none) is supported.
	compressionMask = 0x7
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// BatchHeader is the decoded fixed header of a record batch.
type BatchHeader struct {
	BaseOffset      int64
	Length          int32 // bytes following the Length field
	LeaderEpoch     int32
	CRC             uint32
	Attributes      int16
	LastOffsetDelta int32
	FirstTimestamp  int64
	MaxTimestamp    int64
	RecordCount     int32
}

// Size is the number of bytes the whole batch occupies.
func (h BatchHeader) Size() int { return int(h.Length) + lengthPrefix }

// LastOffset is the offset of the last record in the batch.
func (h BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset is the offset that follows the batch.
func (h BatchHeader) NextOffset() int64 { return h.LastOffset() + 1 }

// ParseBatchHeader decodes and sanity-checks the header at the start of b
// without verifying the CRC. b may be shorter than the whole batch.
func ParseBatchHeader(b []byte) (BatchHeader, error) {
	if len(b) < BatchHeaderSize {
		return BatchHeader{}, fmt.Errorf("%w: %d bytes is shorter than a batch header", ErrCorrupt, len(b))
	}
	be := binary.BigEndian
	h := BatchHeader{
		BaseOffset:      int64(be.Uint64(b[posBaseOffset:])),
		Length:          int32(be.Uint32(b[posLength:])),
		LeaderEpoch:     int32(be.Uint32(b[posEpoch:])),
		CRC:             be.Uint32(b[posCRC:]),
		Attributes:      int16(be.Uint16(b[posAttributes:])),
		LastOffsetDelta: int32(be.Uint32(b[posLastDelta:])),
		FirstTimestamp:  int64(be.Uint64(b[posFirstTs:])),
		MaxTimestamp:    int64(be.Uint64(b[posMaxTs:])),
		RecordCount:     int32(be.Uint32(b[posRecordCount:])),
	}
	switch {
	case h.BaseOffset < 0:
		return h, fmt.Errorf("%w: negative base offset %d", ErrCorrupt, h.BaseOffset)
	case int64(h.Length) < BatchHeaderSize-lengthPrefix+minRecordSize:
		return h, fmt.Errorf("%w: batch length %d too small", ErrCorrupt, h.Length)
	case h.RecordCount < 1 || h.LastOffsetDelta < 0 || h.RecordCount-1 > h.LastOffsetDelta:
		return h, fmt.Errorf("%w: %d records with last offset delta %d", ErrCorrupt, h.RecordCount, h.LastOffsetDelta)
	case int64(h.RecordCount)*minRecordSize > int64(h.Length):
		return h, fmt.Errorf("%w: %d records cannot fit in %d bytes", ErrCorrupt, h.RecordCount, h.Length)
	case h.BaseOffset > math.MaxInt64-int64(h.LastOffsetDelta)-1:
		return h, fmt.Errorf("%w: offsets overflow", ErrCorrupt)
	case h.Attributes&compressionMask != 0:
		return h, fmt.Errorf("%w: unsupported compression %d", ErrCorrupt, h.Attributes&compressionMask)
	}
	return h, nil
}

// VerifyBatch checks that b starts with one whole batch whose CRC matches
// and whose records decode, and returns its header. Nothing is allocated.
func VerifyBatch(b []byte) (BatchHeader, error) {
	h, err := ParseBatchHeader(b)
	if err != nil {
		return h, err
	}
	if h.Size() > len(b) {
		return h, fmt.Errorf("%w: batch of %d bytes truncated to %d", ErrCorrupt, h.Size(), len(b))
	}
	b = b[:h.Size()]
	if crc := crc32.Checksum(b[posAttributes:], castagnoli); crc != h.CRC {
		return h, fmt.Errorf("%w: batch at offset %d has CRC %08x, header says %08x", ErrCorrupt, h.BaseOffset, crc, h.CRC)
	}
	var d recordDecoder
	d.reset(b, h)
	for d.more() {
		if _, err := d.next(false); err != nil {
			return h, err
		}
	}
	return h, d.finish()
}

// DecodeBatch verifies the batch at the start of b and decodes its records.
// Key, Value and header values alias b. It returns the header and records;
// bytes of b after the batch are ignored (see BatchHeader.Size).
func DecodeBatch(b []byte) (BatchHeader, []Record, error) {
	h, err := VerifyBatch(b)
	if err != nil {
		return h, nil, err
	}
	recs := make([]Record, 0, h.RecordCount)
	var d recordDecoder
	d.reset(b[:h.Size()], h)
	for d.more() {
		r, err := d.next(true)
		if err != nil {
			return h, nil, err
		}
		recs = append(recs, r)
	}
	return h, recs, nil
}

// EncodeBatch appends one batch holding records to dst and returns the
// extended slice. Record i gets offset baseOffset+i; Record.Offset is
// ignored and timestamps are written as given.
func EncodeBatch(dst []byte, baseOffset int64, leaderEpoch int32, records []Record) ([]byte, error) {
	return encodeBatch(dst, baseOffset, leaderEpoch, records, 0)
}

// encodeBatch is EncodeBatch with zero timestamps replaced by now.
func encodeBatch(dst []byte, baseOffset int64, leaderEpoch int32, records []Record, now int64) ([]byte, error) {
	if len(records) == 0 {
		return dst, ErrEmptyBatch
	}
	if baseOffset < 0 || len(records) > math.MaxInt32 {
		return dst, fmt.Errorf("storage: cannot encode %d records at offset %d", len(records), baseOffset)
	}
	ts := func(r *Record) int64 {
		if r.Timestamp == 0 {
			return now
		}
		return r.Timestamp
	}
	first := ts(&records[0])
	maxTs := first
	start := len(dst)
	dst = append(dst, make([]byte, BatchHeaderSize)...)
	for i := range records {
		t := ts(&records[i])
		maxTs = max(maxTs, t)
		dst = appendRecord(dst, &records[i], t-first, int64(i))
	}
	size := len(dst) - start
	if size-lengthPrefix > math.MaxInt32 {
		return dst[:start], fmt.Errorf("%w: %d bytes", ErrBatchTooLarge, size)
	}
	b := dst[start:]
	be := binary.BigEndian
	be.PutUint64(b[posBaseOffset:], uint64(baseOffset))
	be.PutUint32(b[posLength:], uint32(size-lengthPrefix))
	be.PutUint32(b[posEpoch:], uint32(leaderEpoch))
	be.PutUint16(b[posAttributes:], 0)
	be.PutUint32(b[posLastDelta:], uint32(len(records)-1))
	be.PutUint64(b[posFirstTs:], uint64(first))
	be.PutUint64(b[posMaxTs:], uint64(maxTs))
	be.PutUint32(b[posRecordCount:], uint32(len(records)))
	be.PutUint32(b[posCRC:], crc32.Checksum(b[posAttributes:], castagnoli))
	return dst, nil
}
