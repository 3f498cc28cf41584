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
	case h.Attributes&compressionMask != 0:
		return h, fmt.Errorf("%w: unsupported compression %d", ErrCorrupt, h.Attributes&compressionMask)
	}
	return h, nil
}

// VerifyBatch checks that b starts with one whole batch whose CRC matches
// and whose records decode, and returns its header.
func VerifyBatch(b []byte) (BatchHeader, error) {
	h, err := ParseBatchHeader(b)
	if err != nil {
		return h, err
	}
	if h.Size() > len(b) {
		return h, fmt.Errorf("%w: batch of %d bytes truncated to %d", ErrCorrupt, h.Size(), len(b))
	}
	b = b[:h.Size()]
	if err := checkCRC(b, h); err != nil {
		return h, err
	}
	var d recordDecoder
	d.reset(b[BatchHeaderSize:], h)
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
	d.reset(b[BatchHeaderSize:h.Size()], h)
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
// ignored and timestamps are written as given. The batch carries no
// producer (producer id, epoch and base sequence -1).
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
	b[posMagic] = Magic
	be.PutUint16(b[posAttributes:], 0)
	be.PutUint32(b[posLastDelta:], uint32(len(records)-1))
	be.PutUint64(b[posFirstTs:], uint64(first))
	be.PutUint64(b[posMaxTs:], uint64(maxTs))
	putProducer(b, NoProducerID, NoProducerEpoch, NoSequence)
	be.PutUint32(b[posRecordCount:], uint32(len(records)))
	be.PutUint32(b[posCRC:], crc32.Checksum(b[posAttributes:], castagnoli))
	return dst, nil
}

// putProducer writes the producer fields of the batch header b.
func putProducer(b []byte, id int64, epoch int16, baseSequence int32) {
	be := binary.BigEndian
	be.PutUint64(b[posProducerID:], uint64(id))
	be.PutUint16(b[posProducerEpoch:], uint16(epoch))
	be.PutUint32(b[posBaseSequence:], uint32(baseSequence))
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
