package broker

import (
	"time"

	"github.com/kairolog/kairolog/broker/storage"
)

// TopicSpec asks for a new topic. Zero Partitions or ReplicationFactor take
// the broker defaults (num.partitions, default.replication.factor).
type TopicSpec struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16
	Config            map[string]string
}

// ConfigChange edits a topic's overrides. With Replace, Set becomes the whole
// set of overrides (PUT); otherwise Set is merged in and Remove deleted (PATCH).
type ConfigChange struct {
	Set     map[string]string
	Remove  []string
	Replace bool
}

// Acks is how many replicas confirm a produce before it is answered.
type Acks int

const (
	// AcksLeader answers after the leader's append (acks=1).
	AcksLeader Acks = 1
	// AcksAll answers once the high watermark covers the batch (acks=all).
	AcksAll Acks = -1
)

// AnyPartition lets the broker pick a record's partition: murmur2 of the key,
// or round robin for keyless records.
const AnyPartition int32 = -1

// ProduceRecord is one record to append. A nil Key is a keyless record.
type ProduceRecord struct {
	Partition int32 // AnyPartition to let the broker choose
	Key       []byte
	Value     []byte
	Headers   []storage.Header
	Timestamp int64 // Unix ms; 0 = now
}

// ProduceArgs is one produce request: records for one topic.
type ProduceArgs struct {
	Topic   string
	Records []ProduceRecord
	Acks    Acks
	Timeout time.Duration // acks=all wait; 0 = 30 s
}

// Position is where a produced record was stored, or why it was not.
type Position struct {
	Partition int32
	// Offset is the record's offset, -1 when it was not stored.
	Offset int64
	// Err is the error of the record's partition, nil when the record was
	// stored as asked. A record with both an Offset and an Err is stored
	// on fewer in-sync replicas than asked for
	// (NOT_ENOUGH_REPLICAS_AFTER_APPEND).
	Err error
}

// Stored reports whether the record is in the partition's log.
func (p Position) Stored() bool { return p.Offset >= 0 }

// FetchArgs reads one partition. Offset < 0 starts at the log start offset.
type FetchArgs struct {
	Topic      string
	Partition  int32
	Offset     int64
	MaxRecords int           // 0 = 500
	MaxBytes   int           // 0 = 1 MiB
	Wait       time.Duration // long poll for data; 0 = answer at once
}

// FetchResult is what a consumer may see of a partition: records below the
// high watermark.
type FetchResult struct {
	Topic          string
	Partition      int32
	Records        []storage.Record
	HighWatermark  int64
	LogStartOffset int64
	NextOffset     int64
}
