package replica

import (
	"errors"
	"net/http"
	"time"

	"github.com/kairolog/kairolog/broker/storage"
)

// The internal HTTP API between replicas, mounted under /internal/replica/:
//
//	GET /internal/replica/fetch
//	    ?topic=&topic_id=&partition=&replica_id=&leader_epoch=&fetch_offset=&max_bytes=&wait_ms=
//	  200, application/octet-stream: raw batches from fetch_offset on (possibly
//	  none, after wait_ms), with the leader's state in headers
//	  Kairolog-High-Watermark, Kairolog-Log-Start-Offset,
//	  Kairolog-Log-End-Offset, Kairolog-Leader-Epoch.
//
//	GET /internal/replica/epoch-end
//	    ?topic=&topic_id=&partition=&replica_id=&leader_epoch=&epoch=
//	  200 {"epoch": E, "end_offset": O}: the largest epoch ≤ epoch in the
//	  leader's log and the offset where it ends (-1, -1 if none).
//
// leader_epoch is the requester's view of the current leadership and is
// checked by the leader: older → 412 FENCED_LEADER_EPOCH, newer → 409
// UNKNOWN_LEADER_EPOCH. topic_id is the id of the requester's replica; one
// the leader's replica does not have → 409 INCONSISTENT_TOPIC_ID (one of
// the two belongs to a deleted topic of the same name, and leader epochs
// start again at 0 in a new topic, so they alone cannot tell). Errors are JSON {"error","code",...} as in the public
// API; an OFFSET_OUT_OF_RANGE (416) also carries log_start_offset,
// log_end_offset and high_watermark, NOT_LEADER (421) carries leader.
const (
	pathFetch    = "/internal/replica/fetch"
	pathEpochEnd = "/internal/replica/epoch-end"

	headerHW       = "Kairolog-High-Watermark"
	headerLogStart = "Kairolog-Log-Start-Offset"
	headerLogEnd   = "Kairolog-Log-End-Offset"
	headerEpoch    = "Kairolog-Leader-Epoch"
)

// maxFetchWait caps a follower's long poll on the leader.
const maxFetchWait = 30 * time.Second

type fetchRequest struct {
	Topic       string
	TopicID     string
	Partition   int32
	ReplicaID   int32
	LeaderEpoch int32
	FetchOffset int64
	MaxBytes    int
	Wait        time.Duration
}

type epochEndRequest struct {
	Topic       string
	TopicID     string
	Partition   int32
	ReplicaID   int32
	LeaderEpoch int32
	Epoch       int32
}

type epochEndResponse struct {
	Epoch     int32 `json:"epoch"`
	EndOffset int64 `json:"end_offset"`
}

// errorBody is the JSON of an internal API error.
type errorBody struct {
	Error          string `json:"error"`
	Code           string `json:"code"`
	Leader         *int32 `json:"leader,omitempty"`
	LeaderEpoch    *int32 `json:"leader_epoch,omitempty"`
	LogStartOffset *int64 `json:"log_start_offset,omitempty"`
	LogEndOffset   *int64 `json:"log_end_offset,omitempty"`
	HighWatermark  *int64 `json:"high_watermark,omitempty"`
}

// errInvalidArgument marks a malformed internal request.
var errInvalidArgument = errors.New("invalid argument")

var wireErrors = []struct {
	err    error
	code   string
	status int
}{
	{ErrFencedLeaderEpoch, "FENCED_LEADER_EPOCH", http.StatusPreconditionFailed},
	{ErrUnknownLeaderEpoch, "UNKNOWN_LEADER_EPOCH", http.StatusConflict},
	{ErrInconsistentTopicID, "INCONSISTENT_TOPIC_ID", http.StatusConflict},
	{ErrUnknownPartition, "UNKNOWN_PARTITION", http.StatusNotFound},
	{ErrNotReplica, "NOT_REPLICA", http.StatusForbidden},
	{errInvalidArgument, "INVALID_ARGUMENT", http.StatusBadRequest},
	{ErrClosed, "NOT_READY", http.StatusServiceUnavailable},
	// The partition is being deleted or the broker is stopping.
	{storage.ErrClosed, "NOT_READY", http.StatusServiceUnavailable},
	// The replica's log failed an fsync and is offline (offline.go).
	{storage.ErrLogFailed, "STORAGE_ERROR", http.StatusServiceUnavailable},
}

// encodeError maps an error to its wire form.
func encodeError(err error) (int, errorBody) {
	body := errorBody{Error: err.Error()}
	var nl *NotLeaderError
	var oor *OffsetOutOfRangeError
	switch {
	case errors.As(err, &nl):
		body.Code, body.Leader, body.LeaderEpoch = "NOT_LEADER", &nl.Leader, &nl.Epoch
		return http.StatusMisdirectedRequest, body
	case errors.As(err, &oor):
		body.Code = "OFFSET_OUT_OF_RANGE"
		body.LogStartOffset, body.LogEndOffset, body.HighWatermark = &oor.LogStartOffset, &oor.LogEndOffset, &oor.HighWatermark
		return http.StatusRequestedRangeNotSatisfiable, body
	}
	for _, w := range wireErrors {
		if errors.Is(err, w.err) {
			body.Code = w.code
			return w.status, body
		}
	}
	body.Code = "INTERNAL"
	return http.StatusInternalServerError, body
}

// decodeError is the inverse of encodeError, for the requesting side.
func decodeError(topic string, partition int32, offset int64, body errorBody) error {
	switch body.Code {
	case "NOT_LEADER":
		e := &NotLeaderError{Topic: topic, Partition: partition, Leader: NoLeader}
		if body.Leader != nil {
			e.Leader = *body.Leader
		}
		if body.LeaderEpoch != nil {
			e.Epoch = *body.LeaderEpoch
		}
		return e
	case "OFFSET_OUT_OF_RANGE":
		e := &OffsetOutOfRangeError{Offset: offset}
		if body.LogStartOffset != nil {
			e.LogStartOffset = *body.LogStartOffset
		}
		if body.LogEndOffset != nil {
			e.LogEndOffset = *body.LogEndOffset
		}
		if body.HighWatermark != nil {
			e.HighWatermark = *body.HighWatermark
		}
		return e
	}
	for _, w := range wireErrors {
		if w.code == body.Code {
			return w.err
		}
	}
	return errors.New("leader: " + body.Error)
}
