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
//	replica/fetch-session  sessionRequest → sessionReply: one long poll
//	  carrying every partition the follower replicates from this leader.
//	  The reply names, per partition, the batches from its fetch offset
//	  on (their bytes travel in the reply's payload, unencoded, in the
//	  order of the entries), the leader's high watermark, log start and
//	  end, or an error, or the epoch where the follower's log diverged.
//	replica/fetch-session-wake  sessionWakeRequest → sessionWakeReply:
//	  ends the session's parked long poll now, so that a follower that
//	  has just started following a partition need not wait for it to
//	  time out before it asks for the partition.
//
// # Sessions (Kafka's KIP-227)
//
// A request with session_id 0 starts a session: it lists every partition
// (a full request), and the leader answers with every partition and the
// new session's id. It replaces the follower's previous session with this
// leader, if any. The following requests of the session carry its id and
// session_epoch 1, 2, … and are incremental: they list only the partitions
// added or whose fetch state changed (fetch offset, leader epoch, last
// fetched epoch, topic id) and name those the follower dropped in
// forgotten; the leader keeps the rest from the session. Its replies list
// only the partitions with something new: batches, an error, a divergence,
// or a high watermark or log start that moved. An idle request of a
// thousand partitions is therefore a few dozen bytes each way.
//
// The leader treats every partition of the session, listed or not, as
// fetched at its session fetch offset on every request: that fetch offset
// is the follower's log end offset, and it drives the high watermark and
// the ISR exactly as a request naming it would.
//
// An unknown session id (the leader restarted, or the session was
// replaced) is FETCH_SESSION_ID_NOT_FOUND, an out-of-order epoch
// INVALID_FETCH_SESSION_EPOCH; either way the follower starts a new
// session with a full request.
//
// # Per-partition answers
//
// leader_epoch is the requester's view of the current leadership and is
// checked by the leader: older → FENCED_LEADER_EPOCH, newer →
// UNKNOWN_LEADER_EPOCH (only once the long poll ends: the leader's
// metadata may be a moment behind). topic_id is the id of the
// requester's replica; one the leader's replica does not have →
// INCONSISTENT_TOPIC_ID (one of the two belongs to a deleted topic of the
// same name). last_fetched_epoch is the latest epoch in the follower's log:
// if the leader's log ends that epoch before fetch_offset, or does not
// know it, the follower's log has diverged, and the reply carries the
// largest epoch ≤ last_fetched_epoch the leader knows and where it ends
// (Kafka's diverging epoch, KIP-320): the follower truncates there before
// fetching again. Errors carry package api's codes: OFFSET_OUT_OF_RANGE
// also carries log_start_offset, log_end_offset and high_watermark,
// NOT_LEADER carries leader and leader_epoch.
var (
	opFetchSession = peer.NewOp[sessionRequest, sessionReply]("replica/fetch-session")
	opSessionWake  = peer.NewOp[sessionWakeRequest, sessionWakeReply]("replica/fetch-session-wake")
)

// maxFetchWait caps a follower's long poll on the leader.
const maxFetchWait = 30 * time.Second

type sessionRequest struct {
	ReplicaID int32 `json:"replica_id"`
	// SessionID 0 starts a new session; SessionEpoch counts the requests
	// of a session from 0.
	SessionID    uint32 `json:"session_id"`
	SessionEpoch int32  `json:"session_epoch"`
	WaitMs       int64  `json:"wait_ms"`
	// MaxBytes bounds the batches of the whole reply; each partition has
	// its own bound too. The first partition with data gets at least one
	// batch, whatever its size.
	MaxBytes   int                       `json:"max_bytes"`
	Partitions []sessionPartitionRequest `json:"partitions,omitempty"`
	Forgotten  []topicPartition          `json:"forgotten,omitempty"`
}

type topicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

type sessionPartitionRequest struct {
	Topic            string `json:"topic"`
	TopicID          string `json:"topic_id"`
	Partition        int32  `json:"partition"`
	LeaderEpoch      int32  `json:"leader_epoch"`
	FetchOffset      int64  `json:"fetch_offset"`
	LastFetchedEpoch int32  `json:"last_fetched_epoch"`
	MaxBytes         int    `json:"max_bytes"`
}

type sessionReply struct {
	SessionID  uint32                  `json:"session_id"`
	Partitions []sessionPartitionReply `json:"partitions,omitempty"`
	// Batches are the partitions' batches back to back, in the order of
	// Partitions, each entry saying how many bytes are its own.
	Batches []byte `json:"-"`
	// reads are the buffers Batches were read into, on the leader.
	reads *readBuffers
	// releaseFrame, on the follower, gives back the buffer the reply was
	// received in, which Batches point into (peer.FrameTaker).
	releaseFrame func()
}

func (r *sessionReply) PeerPayload() []byte     { return r.Batches }
func (r *sessionReply) SetPeerPayload(b []byte) { r.Batches = b }

// ReleasePeerPayload gives the buffers Batches were read into back, once
// the reply is written.
func (r *sessionReply) ReleasePeerPayload() { r.reads.release() }

// TakePeerFrame keeps how to give back the buffer the reply was received
// in, for applied.
func (r *sessionReply) TakePeerFrame(release func()) { r.releaseFrame = release }

// applied gives back the buffer the reply was received in: its batches
// have been appended (or refused), and nothing reads them any more.
func (r *sessionReply) applied() {
	if r.releaseFrame != nil {
		r.releaseFrame()
		r.releaseFrame, r.Batches = nil, nil
	}
}

type sessionPartitionReply struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Error is set instead of everything below.
	Error          *api.ErrorBody `json:"error,omitempty"`
	HighWatermark  int64          `json:"high_watermark"`
	LogStartOffset int64          `json:"log_start_offset"`
	LogEndOffset   int64          `json:"log_end_offset"`
	// Diverging is set instead of batches when the follower's log has
	// diverged from the leader's.
	Diverging *epochEndOffset `json:"diverging_epoch,omitempty"`
	Bytes     int             `json:"bytes,omitempty"`
}

// epochEndOffset is where the leader's log ends an epoch: Epoch is the
// largest epoch ≤ the one asked for that the leader knows (-1 if none)
// and EndOffset the start of the next one, or the log end (-1 if none).
type epochEndOffset struct {
	Epoch     int32 `json:"epoch"`
	EndOffset int64 `json:"end_offset"`
}

type sessionWakeRequest struct {
	ReplicaID int32  `json:"replica_id"`
	SessionID uint32 `json:"session_id"`
	// SessionEpoch is the epoch of the request to end: the one in flight.
	SessionEpoch int32 `json:"session_epoch"`
}

type sessionWakeReply struct{}

// Session-level refusals; the follower starts a new session.
var (
	errSessionNotFound     = errors.New("fetch session not found")
	errInvalidSessionEpoch = errors.New("invalid fetch session epoch")
)

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
	{errSessionNotFound, api.CodeFetchSessionIDNotFound},
	{errInvalidSessionEpoch, api.CodeInvalidFetchSessionEpoch},
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
