package api

// Finding offsets: by time (Kafka's ListOffsets) and by leader epoch
// (OffsetForLeaderEpoch, with which a consumer checks, after a leader
// change, that the records it read were not truncated away).

// Special timestamps of ListOffsetRequest, as Kafka's ListOffsets has them.
const (
	// LatestTimestamp asks for the high watermark: the offset the next
	// committed record will get.
	LatestTimestamp int64 = -1
	// EarliestTimestamp asks for the log start offset.
	EarliestTimestamp int64 = -2
	// MaxTimestamp asks for the record with the largest timestamp.
	MaxTimestamp int64 = -3
)

// ListOffsetRequest finds an offset of one partition: the first record
// whose timestamp is at or after Timestamp, or one of the special
// timestamps above.
type ListOffsetRequest struct {
	Topic              string `json:"topic"`
	Partition          int32  `json:"partition"`
	Timestamp          int64  `json:"timestamp"`
	CurrentLeaderEpoch int32  `json:"current_leader_epoch"`
}

// ListOffsetResult is the offset found and its record's timestamp (-1 for
// the latest and earliest offsets). Offset is -1 when no record is at or
// after the timestamp. LeaderEpoch is the epoch that wrote the offset.
type ListOffsetResult struct {
	Offset      int64 `json:"offset"`
	Timestamp   int64 `json:"timestamp"`
	LeaderEpoch int32 `json:"leader_epoch"`
}

// EpochEndOffsetRequest asks where LeaderEpoch ended in one partition's
// log: the largest epoch at or below it that the log knows, and the offset
// after its last record.
type EpochEndOffsetRequest struct {
	Topic              string `json:"topic"`
	Partition          int32  `json:"partition"`
	LeaderEpoch        int32  `json:"leader_epoch"`
	CurrentLeaderEpoch int32  `json:"current_leader_epoch"`
}

// EpochEndOffsetResult answers an EpochEndOffsetRequest; both are -1 when
// the log knows no epoch at or below the one asked.
type EpochEndOffsetResult struct {
	LeaderEpoch int32 `json:"leader_epoch"`
	EndOffset   int64 `json:"end_offset"`
}
