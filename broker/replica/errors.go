package replica

import (
	"errors"
	"fmt"
)

// ErrUnknownPartition: this broker does not host the partition and the
// metadata does not know it either.
var ErrUnknownPartition = errors.New("unknown topic or partition")

// ErrNotEnoughReplicas: acks=all was asked while the ISR is smaller than
// min.insync.replicas. Nothing was written.
var ErrNotEnoughReplicas = errors.New("not enough in-sync replicas")

// ErrTimeout: acks=all and the high watermark did not reach the batch before
// the deadline. The batch is in the leader's log and may still become
// visible, as in Kafka.
var ErrTimeout = errors.New("request timed out waiting for in-sync replicas")

// ErrFencedLeaderEpoch: the request carries a leader epoch older than the one
// this replica knows; the sender has stale metadata.
var ErrFencedLeaderEpoch = errors.New("fenced leader epoch")

// ErrUnknownLeaderEpoch: the request carries a leader epoch newer than the one
// this replica knows; this replica has not caught up with the metadata yet.
// Retriable.
var ErrUnknownLeaderEpoch = errors.New("unknown leader epoch")

// ErrInconsistentTopicID: the request names the partition's topic with
// another topic id than this broker's replica has: the topic was deleted
// and created again, and one side has not caught up with it yet. Retriable
// (Kafka's INCONSISTENT_TOPIC_ID).
var ErrInconsistentTopicID = errors.New("inconsistent topic id")

// ErrMetadataNotCurrent: this broker cannot vouch that its metadata is
// current — it was stopped or stalled, or has not reached the controller
// for a session timeout — so it neither appends nor serves consumers as
// leader until a heartbeat confirms it (lease.go). Retriable.
var ErrMetadataNotCurrent = errors.New("this broker's metadata is not known to be current (it was stalled or cannot reach the controller)")

// ErrNotEnoughReplicasAfterAppend: acks=all, the batch was appended and the
// high watermark covers it, but the ISR shrank below min.insync.replicas
// while the producer waited (Kafka's NOT_ENOUGH_REPLICAS_AFTER_APPEND).
var ErrNotEnoughReplicasAfterAppend = errors.New("not enough in-sync replicas after append")

// ErrLeaderMovedAfterAppend: acks=all, the batch was appended, but this
// broker stopped leading the partition (or closed it) before the high
// watermark covered the batch. The batch may survive on the new leader or be
// truncated away: the outcome is unknown, as for a timeout, so the batch must
// not be written again on the producer's behalf (that would store it twice
// whenever the new leader already has it). Unlike a NotLeaderError, it does
// not name a leader to forward to.
var ErrLeaderMovedAfterAppend = errors.New("leadership moved before the in-sync replicas had the batch; it may or may not have been kept")

// ErrNotReplica: a broker fetched as a follower of a partition it is not
// assigned to.
var ErrNotReplica = errors.New("broker is not a replica of the partition")

// ErrClosed: the manager or partition has been shut down.
var ErrClosed = errors.New("replica manager closed")

// NotLeaderError says which broker leads the partition, so the caller can
// forward the request there. Leader is -1 when the partition has no leader
// right now (LEADER_NOT_AVAILABLE).
type NotLeaderError struct {
	Topic     string
	Partition int32
	Leader    int32
	Epoch     int32
}

func (e *NotLeaderError) Error() string {
	if e.Leader < 0 {
		return fmt.Sprintf("partition %s-%d has no leader", e.Topic, e.Partition)
	}
	return fmt.Sprintf("broker is not the leader of %s-%d (leader is broker %d, epoch %d)",
		e.Topic, e.Partition, e.Leader, e.Epoch)
}

// OffsetOutOfRangeError carries the bounds a consumer may fetch between:
// [LogStartOffset, HighWatermark]. LogEndOffset is set for followers, whose
// fetches may go up to it.
type OffsetOutOfRangeError struct {
	Offset         int64
	LogStartOffset int64
	HighWatermark  int64
	LogEndOffset   int64
}

func (e *OffsetOutOfRangeError) Error() string {
	return fmt.Sprintf("offset %d is out of range [%d, %d]", e.Offset, e.LogStartOffset, e.HighWatermark)
}
