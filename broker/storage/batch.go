package storage

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

// BatchHeaderSize is the fixed size of a batch header in bytes: Kafka's
// RecordBatch v2 header.
const BatchHeaderSize = 61

// Magic is the format version byte of every batch: Kafka's RecordBatch v2.
const Magic = 2

// Byte positions of the header fields (big-endian, as in Kafka).
const (
	posBaseOffset    = 0  // int64
	posLength        = 8  // int32: bytes after this field
	posEpoch         = 12 // int32: partitionLeaderEpoch
	posMagic         = 16 // int8: 2
	posCRC           = 17 // uint32: CRC32C of bytes [posAttributes, end)
	posAttributes    = 21 // int16
	posLastDelta     = 23 // int32
	posFirstTs       = 27 // int64
	posMaxTs         = 35 // int64
	posProducerID    = 43 // int64
	posProducerEpoch = 51 // int16
	posBaseSequence  = 53 // int32
	posRecordCount   = 57 // int32

	// lengthPrefix is the part of the header that batchLength does not count.
	lengthPrefix = posLength + 4
	// minRecordSize is the smallest encoded record: seven one-byte fields.
	minRecordSize = 7
)

// Attribute bits of a batch (Kafka's RecordBatch attributes).
const (
	// compressionMask selects the bits that name the codec of the records.
	compressionMask = 0x07
	// logAppendTimeBit marks a batch whose records all carry the
	// maxTimestamp the broker wrote (timestamp type LogAppendTime).
	logAppendTimeBit = 0x08
	transactionalBit = 0x10
	controlBit       = 0x20
)

// The values of the producer fields of a batch written without a producer.
const (
	NoProducerID    int64 = -1
	NoProducerEpoch int16 = -1
	NoSequence      int32 = -1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// BatchHeader is the decoded fixed header of a record batch.
type BatchHeader struct {
	BaseOffset      int64
	Length          int32 // bytes following the Length field
	LeaderEpoch     int32 // partitionLeaderEpoch
	Magic           int8
	CRC             uint32
	Attributes      int16
	LastOffsetDelta int32
	FirstTimestamp  int64
	MaxTimestamp    int64
	ProducerID      int64 // NoProducerID without an idempotent producer
	ProducerEpoch   int16
	BaseSequence    int32 // sequence number of the first record
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
		Magic:           int8(b[posMagic]),
		CRC:             be.Uint32(b[posCRC:]),
		Attributes:      int16(be.Uint16(b[posAttributes:])),
		LastOffsetDelta: int32(be.Uint32(b[posLastDelta:])),
		FirstTimestamp:  int64(be.Uint64(b[posFirstTs:])),
		MaxTimestamp:    int64(be.Uint64(b[posMaxTs:])),
		ProducerID:      int64(be.Uint64(b[posProducerID:])),
		ProducerEpoch:   int16(be.Uint16(b[posProducerEpoch:])),
		BaseSequence:    int32(be.Uint32(b[posBaseSequence:])),
		RecordCount:     int32(be.Uint32(b[posRecordCount:])),
	}
	switch {
	case h.Magic != Magic:
		return h, fmt.Errorf("%w: magic %d, want %d", ErrCorrupt, h.Magic, Magic)
	case h.BaseOffset < 0:
		return h, fmt.Errorf("%w: negative base offset %d", ErrCorrupt, h.BaseOffset)
	case int64(h.Length) < BatchHeaderSize-lengthPrefix+minRecordSize:
		return h, fmt.Errorf("%w: batch length %d too small", ErrCorrupt, h.Length)
	case h.RecordCount < 1 || h.LastOffsetDelta < 0 || h.RecordCount-1 > h.LastOffsetDelta:
		return h, fmt.Errorf("%w: %d records with last offset delta %d", ErrCorrupt, h.RecordCount, h.LastOffsetDelta)
	case h.Attributes&compressionMask == 0 && int64(h.RecordCount)*minRecordSize > int64(h.Length):
		return h, fmt.Errorf("%w: %d records cannot fit in %d bytes", ErrCorrupt, h.RecordCount, h.Length)
	case h.BaseOffset > math.MaxInt64-int64(h.LastOffsetDelta)-1:
		return h, fmt.Errorf("%w: offsets overflow", ErrCorrupt)
	case !h.Compression().valid():
		return h, fmt.Errorf("%w: unknown compression %d", ErrCorrupt, h.Compression())
	}
	return h, nil
}

// VerifyBatch checks that b starts with one whole batch whose CRC matches
// and whose records decode (decompressed if need be, to at most
// StoredBatchLimit bytes), and returns its header.
func VerifyBatch(b []byte) (BatchHeader, error) {
	h, _, err := verifyBatch(b, storedRecordsLimit, nil)
	return h, err
}

// checkBatch checks that b starts with one whole batch whose CRC matches,
// and returns its header: VerifyBatch without decoding the records.
func checkBatch(b []byte) (BatchHeader, error) {
	h, err := ParseBatchHeader(b)
	if err != nil {
		return h, err
	}
	if h.Size() > len(b) {
		return h, fmt.Errorf("%w: batch of %d bytes truncated to %d", ErrCorrupt, h.Size(), len(b))
	}
	return h, checkCRC(b[:h.Size()], h)
}

// verifyBatch is VerifyBatch with the records' decompressed size bounded
// by limit and scratch (returned, perhaps grown) to decompress into.
func verifyBatch(b []byte, limit int, scratch []byte) (BatchHeader, []byte, error) {
	h, err := checkBatch(b)
	if err != nil {
		return h, scratch, err
	}
	b = b[:h.Size()]
	records, scratch, err := recordsOf(b, h, scratch, limit)
	if err != nil {
		return h, scratch, err
	}
	var d recordDecoder
	d.reset(records, h)
	for d.more() {
		if _, err := d.next(false); err != nil {
			return h, scratch, err
		}
	}
	return h, scratch, d.finish()
}

// recordsOf returns the records section of batch b (whole, with header h):
// the bytes after the header, or for a compressed batch those bytes
// decompressed into buf[:0] (grown as needed and returned as the second
// result), at most limit bytes of them.
func recordsOf(b []byte, h BatchHeader, buf []byte, limit int) (records, newBuf []byte, err error) {
	section := b[BatchHeaderSize:h.Size()]
	if h.Compression() == CompressionNone {
		if len(section) > limit {
			return nil, buf, fmt.Errorf("%w: %d bytes of records, limit %d", ErrBatchTooLarge, len(section), limit)
		}
		return section, buf, nil
	}
	out, err := decompress(buf[:0], h.Compression(), section, limit)
	if err != nil {
		return nil, buf, fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
	}
	return out, out, nil
}

// DecodeBatch verifies the batch at the start of b and decodes its records.
// Key, Value and header values alias b, or for a compressed batch a
// buffer of their own. It returns the header and records; bytes of b
// after the batch are ignored (see BatchHeader.Size).
func DecodeBatch(b []byte) (BatchHeader, []Record, error) {
	h, err := VerifyBatch(b)
	if err != nil {
		return h, nil, err
	}
	records, _, err := recordsOf(b, h, nil, storedRecordsLimit)
	if err != nil {
		return h, nil, err
	}
	recs := make([]Record, 0, h.RecordCount)
	var d recordDecoder
	d.reset(records, h)
	for d.more() {
		r, err := d.next(true)
		if err != nil {
			return h, nil, err
		}
		recs = append(recs, r)
	}
	return h, recs, nil
}

// checkCRC verifies a whole batch's checksum: CRC-32C of everything from
// the attributes to the end, as in Kafka. The base offset, length, leader
// epoch and magic are outside it, so the broker sets the first and third
// without touching the rest.
func checkCRC(b []byte, h BatchHeader) error {
	if crc := crc32.Checksum(b[posAttributes:], castagnoli); crc != h.CRC {
		return fmt.Errorf("%w: batch at offset %d has CRC %08x, header says %08x", ErrCorrupt, h.BaseOffset, crc, h.CRC)
	}
	return nil
}
