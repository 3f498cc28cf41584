package api

import "time"

// Deleting records from the start of a partition (Kafka's DeleteRecords):
// the log start offset moves up, the records below it can no longer be
// read, and the segments left holding none at or above it are deleted, on
// the leader and, with their next fetch, on every follower.

// HighWatermarkOffset as a DeleteRecordsRequest's Offset deletes every
// record committed so far, as -1 does in Kafka's DeleteRecords.
const HighWatermarkOffset int64 = -1

// DeleteRecordsRequest deletes the records of one partition below Offset,
// at most up to its high watermark, waiting up to Timeout (0:
// DefaultDeleteRecordsTimeout) for the in-sync replicas to delete them too.
type DeleteRecordsRequest struct {
	Topic     string        `json:"topic"`
	Partition int32         `json:"partition"`
	Offset    int64         `json:"offset"`
	Timeout   time.Duration `json:"timeout,omitempty"`
}

// DefaultDeleteRecordsTimeout is how long a deletion waits for the
// in-sync replicas without a timeout of its own (Kafka's clients send 30 s).
const DefaultDeleteRecordsTimeout = 30 * time.Second

// DeleteRecordsResult is the partition's log start offset afterwards,
// Kafka's low watermark.
type DeleteRecordsResult struct {
	LowWatermark int64 `json:"low_watermark"`
}

// PartitionRecordsDeletion is one partition of POST
// /topics/{name}/delete-records: delete its records below Offset
// (HighWatermarkOffset: every committed record).
type PartitionRecordsDeletion struct {
	Partition int32 `json:"partition"`
	Offset    int64 `json:"offset"`
}

// RecordsDeletion is one partition's answer to POST
// /topics/{name}/delete-records: its low watermark afterwards, or the
// error that left it as it was.
type RecordsDeletion struct {
	Partition    int32  `json:"partition"`
	LowWatermark *int64 `json:"low_watermark,omitempty"`
	Error        string `json:"error,omitempty"`
	Code         string `json:"code,omitempty"`
}
