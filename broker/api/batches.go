package api

import "time"

// Encoded record batches. The log stores Kafka's RecordBatch v2 as it is,
// so a client that encodes its own batches (a Kafka producer) appends them
// unchanged but for the base offset and partition leader epoch, and a
// client that decodes them (a Kafka consumer) reads stored batches as they
// are.

// ProduceBatchRequest appends one encoded batch to one partition. TopicID,
// when set, must be the topic's id (a client that names topics by id).
type ProduceBatchRequest struct {
	Topic     string        `json:"topic"`
	TopicID   string        `json:"topic_id,omitempty"`
	Partition int32         `json:"partition"`
	Batch     []byte        `json:"batch"`
	Acks      Acks          `json:"acks"`
	Timeout   time.Duration `json:"timeout"`
}

// ProduceBatchResult is where the batch was stored: BaseOffset is its first
// record's offset. A retried batch of an idempotent producer that was
// already stored is answered with its original offsets (Duplicate).
type ProduceBatchResult struct {
	BaseOffset     int64 `json:"base_offset"`
	LastOffset     int64 `json:"last_offset"`
	LogStartOffset int64 `json:"log_start_offset"`
	Duplicate      bool  `json:"duplicate,omitempty"`
}

// FetchBatchesRequest reads stored batches from several partitions at once,
// as a Kafka consumer fetches: it answers as soon as MinBytes are there
// across the partitions, or after MaxWait with what there is.
type FetchBatchesRequest struct {
	Partitions []FetchPartition `json:"partitions"`
	// MaxBytes bounds the whole answer, MinBytes is what it waits for.
	MaxBytes int           `json:"max_bytes"`
	MinBytes int           `json:"min_bytes"`
	MaxWait  time.Duration `json:"max_wait"`
}

// FetchPartition is one partition of a fetch: from Offset, at most MaxBytes
// of batches (but always the first whole batch, however large, as Kafka
// does, so that a consumer never stalls). CurrentLeaderEpoch, when not
// NoLeaderEpoch, is the leader epoch the client believes in: an older one is
// FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH.
type FetchPartition struct {
	Topic              string `json:"topic"`
	TopicID            string `json:"topic_id,omitempty"`
	Partition          int32  `json:"partition"`
	Offset             int64  `json:"offset"`
	MaxBytes           int    `json:"max_bytes"`
	CurrentLeaderEpoch int32  `json:"current_leader_epoch"`
}

// NoLeaderEpoch is a request's leader epoch when the client names none.
const NoLeaderEpoch int32 = -1

// FetchBatchesResult has one entry per requested partition, in order.
type FetchBatchesResult struct {
	Partitions []FetchedPartition `json:"partitions"`
}

// FetchedPartition is what one partition answered: whole stored batches
// starting with the one that holds the requested offset (so the first
// records may precede it), below the high watermark; or Err.
type FetchedPartition struct {
	Topic          string `json:"topic"`
	Partition      int32  `json:"partition"`
	Batches        []byte `json:"batches"`
	HighWatermark  int64  `json:"high_watermark"`
	LogStartOffset int64  `json:"log_start_offset"`
	// Err is the partition's error as an *Error (OFFSET_OUT_OF_RANGE,
	// NOT_LEADER …); nil when it answered.
	Err *Error `json:"error,omitempty"`
}
