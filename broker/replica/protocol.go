package replica

import (
	"errors"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/storage"
)

// The replica operations on the peer transport (broker/peer):
//
//	replica/fetch      fetchRequest → fetchReply: raw batches from
//	  fetch_offset on (possibly none, after wait_ms), with the leader's
//	  high watermark, log start and end offsets and epoch; the batches
//	  travel as the reply's payload, unencoded.
//	replica/epoch-end  epochEndRequest → epochEndResponse: the largest
//	  epoch ≤ epoch in the leader's log and the offset where it ends (-1,
//	  -1 if none).
//
// leader_epoch is the requester's view of the current leadership and is
// checked by the leader: older → FENCED_LEADER_EPOCH, newer →
// UNKNOWN_LEADER_EPOCH. topic_id is the id of the requester's replica; one
// the leader's replica does not have → INCONSISTENT_TOPIC_ID (one of the
// two belongs to a deleted topic of the same name, and leader epochs start
// again at 0 in a new topic, so they alone cannot tell). Errors carry
// package api's codes:
// OFFSET_OUT_OF_RANGE also carries log_start_offset, log_end_offset and
// high_watermark, NOT_LEADER carries leader and leader_epoch.
var (
	opFetch    = peer.NewOp[fetchRequest, fetchReply]("replica/fetch")
	opEpochEnd = peer.NewOp[epochEndRequest, epochEndResponse]("replica/epoch-end")
)

// maxFetchWait caps a follower's long poll on the leader.
const maxFetchWait = 30 * time.Second

type fetchRequest struct {
	Topic       string `json:"topic"`
	TopicID     string `json:"topic_id"`
	Partition   int32  `json:"partition"`
	ReplicaID   int32  `json:"replica_id"`
	LeaderEpoch int32  `json:"leader_epoch"`
	FetchOffset int64  `json:"fetch_offset"`
	MaxBytes    int    `json:"max_bytes"`
	WaitMs      int64  `json:"wait_ms"`
}

// fetchReply is followerFetchResult on the wire.
type fetchReply struct {
	HighWatermark  int64  `json:"high_watermark"`
	LogStartOffset int64  `json:"log_start_offset"`
	LogEndOffset   int64  `json:"log_end_offset"`
	LeaderEpoch    int32  `json:"leader_epoch"`
	Batches        []byte `json:"-"`
}

func (r *fetchReply) PeerPayload() []byte     { return r.Batches }
func (r *fetchReply) SetPeerPayload(b []byte) { r.Batches = b }

type epochEndRequest struct {
	Topic       string `json:"topic"`
	TopicID     string `json:"topic_id"`
	Partition   int32  `json:"partition"`
	ReplicaID   int32  `json:"replica_id"`
	LeaderEpoch int32  `json:"leader_epoch"`
	Epoch       int32  `json:"epoch"`
}

type epochEndResponse struct {
	Epoch     int32 `json:"epoch"`
	EndOffset int64 `json:"end_offset"`
}

// errInvalidArgument marks a malformed replica request.
var errInvalidArgument = errors.New("invalid argument")

// wireErrors are this package's errors with their codes.
var wireErrors = []struct {
	err  error
	code string
}{
	{ErrFencedLeaderEpoch, api.CodeFencedLeaderEpoch},
	{ErrUnknownLeaderEpoch, api.CodeUnknownLeaderEpoch},
	{ErrInconsistentTopicID, api.CodeInconsistentTopicID},
	{ErrUnknownPartition, api.CodeUnknownPartition},
	{ErrNotReplica, api.CodeNotReplica},
	{errInvalidArgument, api.CodeInvalidArgument},
	{ErrClosed, api.CodeNotReady},
	// The partition is being deleted or the broker is stopping.
	{storage.ErrClosed, api.CodeNotReady},
	// The replica's log failed an fsync and is offline (offline.go).
	{storage.ErrLogFailed, api.CodeStorageError},
}

// encodeError is the *api.Error of an error of this package.
func encodeError(err error) *api.Error {
	var nl *NotLeaderError
	var oor *OffsetOutOfRangeError
	switch {
	case errors.As(err, &nl):
		e := api.Errorf(api.CodeNotLeader, "%v", err)
		e.Leader, e.LeaderEpoch = &nl.Leader, &nl.Epoch
		return e
	case errors.As(err, &oor):
		e := api.Errorf(api.CodeOffsetOutOfRange, "%v", err)
		e.LogStartOffset, e.LogEndOffset, e.HighWatermark = &oor.LogStartOffset, &oor.LogEndOffset, &oor.HighWatermark
		return e
	}
	for _, w := range wireErrors {
		if errors.Is(err, w.err) {
			return api.Errorf(w.code, "%v", err)
		}
	}
	return api.Errorf(api.CodeInternal, "%v", err)
}

// decodeError is the inverse of encodeError, for the requesting side; an
// unreachable leader and the caller's deadline pass through.
func decodeError(topic string, partition int32, offset int64, err error) error {
	var e *api.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Code {
	case api.CodeNotLeader:
		nl := &NotLeaderError{Topic: topic, Partition: partition, Leader: NoLeader}
		if e.Leader != nil {
			nl.Leader = *e.Leader
		}
		if e.LeaderEpoch != nil {
			nl.Epoch = *e.LeaderEpoch
		}
		return nl
	case api.CodeOffsetOutOfRange:
		oor := &OffsetOutOfRangeError{Offset: offset}
		if e.LogStartOffset != nil {
			oor.LogStartOffset = *e.LogStartOffset
		}
		if e.LogEndOffset != nil {
			oor.LogEndOffset = *e.LogEndOffset
		}
		if e.HighWatermark != nil {
			oor.HighWatermark = *e.HighWatermark
		}
		return oor
	}
	for _, w := range wireErrors {
		if w.code == e.Code {
			return w.err
		}
	}
	return errors.New("leader: " + e.Error())
}
