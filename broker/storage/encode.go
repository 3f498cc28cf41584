package storage

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

// BatchOptions say how Append writes a batch beyond its records.
type BatchOptions struct {
	// Compression is the codec of the records (topic config
	// compression.type); the zero value writes them uncompressed.
	Compression Compression
	// Producer stamps the batch with an idempotent producer; nil writes
	// none (producer id, epoch and base sequence -1).
	Producer *Producer
}

// EncodeBatch appends one uncompressed batch holding records to dst and
// returns the extended slice. Record i gets offset baseOffset+i;
// Record.Offset is ignored and timestamps are written as given. The batch
// carries no producer (producer id, epoch and base sequence -1).
func EncodeBatch(dst []byte, baseOffset int64, leaderEpoch int32, records []Record) ([]byte, error) {
	var e batchEncoder
	b, _, err := e.encode(dst, baseOffset, leaderEpoch, records, 0, BatchOptions{})
	return b, err
}

// batchEncoder writes batches; it keeps the buffer that the records of a
// compressed batch are encoded into before they are compressed.
type batchEncoder struct {
	raw []byte
}

// encode appends one batch holding records to dst, with zero timestamps
// replaced by now. It also returns the batch's size uncompressed, which
// max.message.bytes bounds.
func (e *batchEncoder) encode(dst []byte, baseOffset int64, leaderEpoch int32, records []Record, now int64, opts BatchOptions) ([]byte, int, error) {
	if len(records) == 0 {
		return dst, 0, ErrEmptyBatch
	}
	if baseOffset < 0 || len(records) > math.MaxInt32 {
		return dst, 0, fmt.Errorf("storage: cannot encode %d records at offset %d", len(records), baseOffset)
	}
	if !opts.Compression.valid() {
		return dst, 0, fmt.Errorf("storage: unknown compression %d", opts.Compression)
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
	section := e.recordsBuffer(dst, opts)
	sectionStart := len(section)
	for i := range records {
		t := ts(&records[i])
		maxTs = max(maxTs, t)
		section = appendRecord(section, &records[i], t-first, int64(i))
	}
	return e.finish(dst, start, section, sectionStart, baseOffset, leaderEpoch, len(records), first, maxTs, opts)
}

// recordsBuffer is where the records of the batch whose header was just
// appended to dst are encoded: uncompressed, straight behind the header;
// compressed, aside first.
func (e *batchEncoder) recordsBuffer(dst []byte, opts BatchOptions) []byte {
	if opts.Compression != CompressionNone {
		return e.raw[:0]
	}
	return dst
}

// finish completes the batch at dst[start:] whose count records were
// encoded into section from sectionStart on (recordsBuffer): it
// compresses them behind the header if opts asks, then fills in the
// header. It returns dst and the batch's size uncompressed, or dst[:start]
// and an error.
func (e *batchEncoder) finish(dst []byte, start int, section []byte, sectionStart int, baseOffset int64, leaderEpoch int32, count int, first, maxTs int64, opts BatchOptions) ([]byte, int, error) {
	rawSize := BatchHeaderSize + len(section) - sectionStart
	if opts.Compression == CompressionNone {
		dst = section
	} else {
		if cap(section) <= 4<<20 {
			e.raw = section // keep the buffer unless one odd batch made it huge
		}
		var err error
		if dst, err = compress(dst, opts.Compression, section); err != nil {
			return dst[:start], 0, err
		}
	}
	return e.finishHeader(dst, start, rawSize, baseOffset, leaderEpoch, count, first, maxTs, opts)
}

// finishHeader fills in the header of the batch at dst[start:], whose
// records follow it, and returns dst and rawSize, or dst[:start] if the
// batch is too large for its length field.
func (e *batchEncoder) finishHeader(dst []byte, start, rawSize int, baseOffset int64, leaderEpoch int32, count int, first, maxTs int64, opts BatchOptions) ([]byte, int, error) {
	size := len(dst) - start
	if size-lengthPrefix > math.MaxInt32 || rawSize-lengthPrefix > math.MaxInt32 {
		return dst[:start], 0, fmt.Errorf("%w: %d bytes", ErrBatchTooLarge, max(size, rawSize))
	}
	b := dst[start:]
	be := binary.BigEndian
	be.PutUint64(b[posBaseOffset:], uint64(baseOffset))
	be.PutUint32(b[posLength:], uint32(size-lengthPrefix))
	be.PutUint32(b[posEpoch:], uint32(leaderEpoch))
	b[posMagic] = Magic
	be.PutUint16(b[posAttributes:], uint16(opts.Compression))
	be.PutUint32(b[posLastDelta:], uint32(count-1))
	be.PutUint64(b[posFirstTs:], uint64(first))
	be.PutUint64(b[posMaxTs:], uint64(maxTs))
	if p := opts.Producer; p != nil {
		putProducer(b, p.ID, p.Epoch, p.BaseSequence)
	} else {
		putProducer(b, NoProducerID, NoProducerEpoch, NoSequence)
	}
	be.PutUint32(b[posRecordCount:], uint32(count))
	be.PutUint32(b[posCRC:], crc32.Checksum(b[posAttributes:], castagnoli))
	return dst, rawSize, nil
}

// putProducer writes the producer fields of the batch header b.
func putProducer(b []byte, id int64, epoch int16, baseSequence int32) {
	be := binary.BigEndian
	be.PutUint64(b[posProducerID:], uint64(id))
	be.PutUint16(b[posProducerEpoch:], uint16(epoch))
	be.PutUint32(b[posBaseSequence:], uint32(baseSequence))
}
