package storage

import (
	"errors"
	"fmt"
)

var (
	// ErrOffsetOutOfRange is matched (errors.Is) by *OffsetOutOfRangeError.
	ErrOffsetOutOfRange = errors.New("storage: offset out of range")
	// ErrCorrupt reports bytes that fail a CRC or do not decode as a batch.
	ErrCorrupt = errors.New("storage: corrupt batch")
	// ErrBatchTooLarge rejects a batch larger than Config.MaxBatchBytes.
	ErrBatchTooLarge = errors.New("storage: batch too large")
	// ErrEmptyBatch rejects an Append of no records.
	ErrEmptyBatch = errors.New("storage: empty batch")
	// ErrNotContiguous rejects an AppendRaw whose batches do not start at
	// the log end offset or do not follow each other.
	ErrNotContiguous = errors.New("storage: batch offsets do not continue the log")
	// ErrStaleEpoch rejects a batch whose leader epoch is lower than the
	// latest epoch already in the log.
	ErrStaleEpoch = errors.New("storage: leader epoch older than the log's latest")
	// ErrClosed is returned by every method after Close or Delete.
	ErrClosed = errors.New("storage: log closed")
	// ErrCorruptBatch wraps the ErrCorrupt of a producer's batch that
	// AppendBatch refuses (Kafka's CORRUPT_MESSAGE): the sender's bytes
	// are bad, not the log's.
	ErrCorruptBatch = errors.New("storage: corrupt batch from the producer")
	// ErrInvalidRecord rejects a producer's batch that is well formed but
	// not one the log takes (Kafka's INVALID_RECORD): transactional or
	// control batches, offset deltas that are not 0, 1, 2, ….
	ErrInvalidRecord = errors.New("storage: invalid record batch")
	// ErrInvalidProducer rejects an idempotent batch with a negative
	// producer epoch or sequence.
	ErrInvalidProducer = errors.New("storage: invalid producer fields")
	// ErrOutOfOrderSequence rejects an idempotent batch that does not
	// continue its producer's sequence in the partition and is not one of
	// its last five batches (Kafka's OUT_OF_ORDER_SEQUENCE_NUMBER).
	ErrOutOfOrderSequence = errors.New("storage: out of order sequence number")
	// ErrInvalidProducerEpoch rejects an idempotent batch of an older
	// epoch than the partition has seen from its producer (Kafka's
	// INVALID_PRODUCER_EPOCH): a newer instance of the producer has taken
	// over.
	ErrInvalidProducerEpoch = errors.New("storage: producer epoch older than the partition has seen")
	// ErrLogFailed is returned by every write after an fsync of the log's
	// files failed (see Log.Err): what was written since the last fsync
	// that succeeded may never reach the disk, whatever a retried fsync
	// says, so the log takes no more writes until it is opened again and
	// recovered from its last synced offset.
	ErrLogFailed = errors.New("storage: log failed after an fsync error")
)

// OffsetOutOfRangeError carries the valid range of a log when a read or a
// log operation names an offset outside [LogStartOffset, LogEndOffset].
type OffsetOutOfRangeError struct {
	Offset         int64
	LogStartOffset int64
	LogEndOffset   int64
}

func (e *OffsetOutOfRangeError) Error() string {
	return fmt.Sprintf("storage: offset %d out of range [%d, %d]", e.Offset, e.LogStartOffset, e.LogEndOffset)
}

// Unwrap makes errors.Is(err, ErrOffsetOutOfRange) hold.
func (e *OffsetOutOfRangeError) Unwrap() error { return ErrOffsetOutOfRange }
