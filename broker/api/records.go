package api

import (
	"encoding/json"
	"time"
)

// Acks is how many replicas confirm a produce before it is answered.
type Acks int

const (
	// AcksLeader answers after the leader's append (acks=1).
	AcksLeader Acks = 1
	// AcksAll answers once the high watermark covers the batch (acks=all).
	AcksAll Acks = -1
)

// AnyPartition lets the broker pick a record's partition: murmur2 of the
// key (Kafka's default partitioner), or round robin for keyless records.
const AnyPartition int32 = -1

// Header is one record header.
type Header struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

// Record is one stored record as a consumer reads it.
type Record struct {
	Offset    int64    `json:"offset"`
	Timestamp int64    `json:"timestamp"` // Unix ms
	Key       []byte   `json:"key"`       // nil: a keyless record
	Value     []byte   `json:"value"`
	Headers   []Header `json:"headers,omitempty"`
}

// ProduceRecord is one record to append. A nil Key is a keyless record.
type ProduceRecord struct {
	Partition int32    `json:"partition"` // AnyPartition lets the broker choose
	Key       []byte   `json:"key"`
	Value     []byte   `json:"value"`
	Headers   []Header `json:"headers,omitempty"`
	Timestamp int64    `json:"timestamp,omitempty"` // Unix ms; 0 = now
}

// ProduceRequest appends records to one topic. The records of each
// partition are written as one batch.
type ProduceRequest struct {
	Topic   string          `json:"topic"`
	Records []ProduceRecord `json:"records"`
	Acks    Acks            `json:"acks"`
	// Timeout bounds the wait of acks=all; 0 is 30 s.
	Timeout time.Duration `json:"timeout"`
	// Producer makes the produce idempotent: its batch is not written
	// again when the same producer sends the same sequence again. All
	// records then go to one partition.
	Producer *ProducerSequence `json:"producer,omitempty"`
}

// Producer is an idempotent producer as the cluster gave it out (POST
// /producers): an id never handed out before and its epoch.
type Producer struct {
	ID    int64 `json:"producer_id"`
	Epoch int16 `json:"producer_epoch"`
}

// ProducerSequence stamps a produce with its idempotent producer and the
// sequence number of its first record in the partition.
type ProducerSequence struct {
	ID       int64 `json:"id"`
	Epoch    int16 `json:"epoch"`
	Sequence int32 `json:"sequence"`
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
	// Duplicate: an idempotent produce sent again; the record was stored
	// by the first, at Offset, and not written again.
	Duplicate bool
}

// Stored reports whether the record is in the partition's log.
func (p Position) Stored() bool { return p.Offset >= 0 }

// FetchRequest reads one partition. Offset < 0 starts at the log start
// offset; zero limits take the broker's defaults.
type FetchRequest struct {
	Topic      string        `json:"topic"`
	Partition  int32         `json:"partition"`
	Offset     int64         `json:"offset"`
	MaxRecords int           `json:"max_records"`
	MaxBytes   int           `json:"max_bytes"`
	Wait       time.Duration `json:"wait"` // long poll for data; 0 answers at once
}

// FetchResult is what a consumer may see of a partition: records below the
// high watermark.
type FetchResult struct {
	Topic          string   `json:"topic"`
	Partition      int32    `json:"partition"`
	Records        []Record `json:"records"`
	HighWatermark  int64    `json:"high_watermark"`
	LogStartOffset int64    `json:"log_start_offset"`
	NextOffset     int64    `json:"next_offset"`
}

// RecordPosition is where one produced record was stored, or why it was
// not, as a reply carries it. Offset is -1 for a record that was not
// stored (the JSON omits "offset"). Code and Error are set for a record
// whose partition failed; a record with both an Offset and a Code is
// stored, with less replication than asked for
// (NOT_ENOUGH_REPLICAS_AFTER_APPEND).
type RecordPosition struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Error     string `json:"error,omitempty"`
	Code      string `json:"code,omitempty"`
	// Duplicate: stored by an earlier send of the same idempotent batch.
	Duplicate bool `json:"duplicate,omitempty"`
}

// Stored reports whether the record is in the partition's log.
func (r RecordPosition) Stored() bool { return r.Offset >= 0 }

// recordPositionJSON is RecordPosition's wire shape, where a missing
// "offset" means the record was not stored.
type recordPositionJSON struct {
	Partition int32  `json:"partition"`
	Offset    *int64 `json:"offset,omitempty"`
	Error     string `json:"error,omitempty"`
	Code      string `json:"code,omitempty"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

// MarshalJSON leaves "offset" out for a record that was not stored.
func (r RecordPosition) MarshalJSON() ([]byte, error) {
	w := recordPositionJSON{Partition: r.Partition, Error: r.Error, Code: r.Code, Duplicate: r.Duplicate}
	if r.Offset >= 0 {
		w.Offset = &r.Offset
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a missing "offset" as -1.
func (r *RecordPosition) UnmarshalJSON(b []byte) error {
	var w recordPositionJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = RecordPosition{Partition: w.Partition, Offset: -1, Error: w.Error, Code: w.Code, Duplicate: w.Duplicate}
	if w.Offset != nil {
		r.Offset = *w.Offset
	}
	return nil
}
