package core

import (
	"context"
	"errors"
	"io/fs"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
	"github.com/kairolog/kairolog/broker/group"
	"github.com/kairolog/kairolog/broker/memory"
	"github.com/kairolog/kairolog/broker/replica"
	"github.com/kairolog/kairolog/broker/storage"
)

// AsAPIError is what a client is told about err: the *api.Error whose
// code (and through it a front door's status or error code) fits the
// cause. This is the one
// place where errors of the packages below the broker (storage, replica,
// group, the metadata quorum) get their client-facing codes; errorRules
// lists every one of their errors, and TestEveryCoreErrorHasAClientCode
// keeps it so.
//
// What a leader change, a shutdown or a corrupt batch causes is a 503 the
// client retries (LEADER_NOT_AVAILABLE, NOT_READY, STORAGE_ERROR …), with
// a retry hint. ok is false for an error no rule knows: only a bug makes
// one, and a front door logs it and answers INTERNAL.
func AsAPIError(err error) (e *api.Error, ok bool) {
	if err == nil {
		return nil, false
	}
	defer func() {
		if ok && e.Retriable() && e.RetryAfterMs == 0 {
			hinted := *e // a copy: e may be another broker's reply
			hinted.RetryAfterMs = defaultRetryAfterMs
			e = &hinted
		}
	}()
	if errors.As(err, &e) {
		return e, true
	}
	var oor *replica.OffsetOutOfRangeError
	if errors.As(err, &oor) {
		e := api.Errorf(api.CodeOffsetOutOfRange, "offset %d is outside [%d, %d]", oor.Offset, oor.LogStartOffset, oor.HighWatermark)
		e.LogStartOffset, e.HighWatermark = &oor.LogStartOffset, &oor.HighWatermark
		return e, true
	}
	var soor *storage.OffsetOutOfRangeError
	if errors.As(err, &soor) {
		e := api.Errorf(api.CodeOffsetOutOfRange, "offset %d is outside [%d, %d]", soor.Offset, soor.LogStartOffset, soor.LogEndOffset)
		e.LogStartOffset, e.HighWatermark = &soor.LogStartOffset, &soor.LogEndOffset
		return e, true
	}
	var notLeader *replica.NotLeaderError
	if errors.As(err, &notLeader) {
		return api.Errorf(api.CodeLeaderNotAvailable, "%v", err), true
	}
	for _, rule := range errorRules {
		if errors.Is(err, rule.err) {
			return api.Errorf(rule.code, "%v", err), true
		}
	}
	var pathErr *fs.PathError
	switch {
	case errors.As(err, &pathErr):
		// A file of a partition log could not be read or written: a disk
		// error, a full disk.
		return api.Errorf(api.CodeStorageError, "%v", err), true
	case errors.Is(err, context.DeadlineExceeded):
		return api.Errorf(api.CodeRequestTimedOut, "%v", err), true
	case errors.Is(err, context.Canceled):
		return api.Errorf(api.CodeRequestTimedOut, "request cancelled: %v", err), true
	}
	return nil, false
}

// defaultRetryAfterMs is the retry hint of a retriable error that names
// none of its own.
const defaultRetryAfterMs = 500

// apiError is AsAPIError for the broker's own methods: an error no rule
// knows passes through unchanged, so the server logs its cause.
func apiError(err error) error {
	if e, ok := AsAPIError(err); ok {
		return e
	}
	return err
}

// errorRules give every error of the packages below the broker its client
// code, first match wins. The rules for errors a client request cannot
// meet (a follower's fetch, the controller's own bookkeeping) still name
// the code it would get, so that no path answers 500 for them.
var errorRules = []struct {
	err  error
	code string
}{
	// storage: the partition log.
	{storage.ErrOffsetOutOfRange, api.CodeOffsetOutOfRange},
	{storage.ErrBatchTooLarge, api.CodeRecordTooLarge},
	{storage.ErrEmptyBatch, api.CodeInvalidArgument},
	// A batch stamped with an epoch older than the log's latest: this
	// broker led in an epoch that has since ended (a leader change raced
	// the append).
	{storage.ErrStaleEpoch, api.CodeLeaderNotAvailable},
	// Follower appends only: the log moved under a fetch (truncated after
	// a leader change).
	{storage.ErrNotContiguous, api.CodeLeaderNotAvailable},
	// A producer's batch: refused before anything was written.
	{storage.ErrCorruptBatch, api.CodeCorruptMessage},
	{storage.ErrInvalidRecord, api.CodeInvalidRecord},
	{storage.ErrInvalidProducer, api.CodeInvalidArgument},
	{storage.ErrOutOfOrderSequence, api.CodeOutOfOrderSequence},
	{storage.ErrInvalidProducerEpoch, api.CodeInvalidProducerEpoch},
	// Stored bytes fail their CRC: another replica may take over.
	{storage.ErrCorrupt, api.CodeStorageError},
	{storage.ErrCorruptPartitionMetadata, api.CodeStorageError},
	// An fsync of the partition's log failed: the replica is offline until
	// its broker restarts; another replica may take over.
	{storage.ErrLogFailed, api.CodeStorageError},
	// The log closed under the request: the partition moved away or the
	// broker is stopping.
	{storage.ErrClosed, api.CodeLeaderNotAvailable},

	// replica: leadership, ISR and high watermark.
	{replica.ErrUnknownPartition, api.CodeUnknownPartition},
	{replica.ErrNotEnoughReplicas, api.CodeNotEnoughReplicas},
	{replica.ErrNotEnoughReplicasAfterAppend, api.CodeNotEnoughReplicasAfterAppend},
	{replica.ErrTimeout, api.CodeRequestTimedOut},
	{replica.ErrLeaderMovedAfterAppend, api.CodeLeaderNotAvailable},
	{replica.ErrFencedLeaderEpoch, api.CodeLeaderNotAvailable},
	{replica.ErrUnknownLeaderEpoch, api.CodeLeaderNotAvailable},
	{replica.ErrNotReplica, api.CodeLeaderNotAvailable},
	// The topic was deleted and created again, and this broker or the
	// one that sent the request has not caught up with it yet.
	{replica.ErrInconsistentTopicID, api.CodeLeaderNotAvailable},
	// This broker was stopped or stalled, or cannot reach the controller:
	// it does not act as leader until a heartbeat confirms its metadata.
	{replica.ErrMetadataNotCurrent, api.CodeLeaderNotAvailable},
	{replica.ErrClosed, api.CodeNotReady},

	// group: consumer-group coordinators.
	{group.ErrInvalidArgument, api.CodeInvalidArgument},
	{group.ErrUnknownGroup, api.CodeUnknownGroup},
	{group.ErrUnknownMember, api.CodeUnknownMemberID},
	{group.ErrIllegalGeneration, api.CodeIllegalGeneration},
	{group.ErrRebalanceInProgress, api.CodeRebalanceInProgress},
	{group.ErrNonEmptyGroup, api.CodeNonEmptyGroup},
	{group.ErrGroupSubscribedToTopic, api.CodeGroupSubscribedToTopic},
	{group.ErrInconsistentGroupProtocol, api.CodeInconsistentGroupProtocol},
	{group.ErrNoActiveMembers, api.CodeNoActiveMembers},
	{group.ErrUnknownTopic, api.CodeUnknownTopic},
	{group.ErrUnknownPartition, api.CodeUnknownPartition},
	{group.ErrCoordinatorNotAvailable, api.CodeCoordinatorNotAvailable},
	// A group journal record that does not decode: the coordinator cannot
	// load the group here; another replica of its partition may.
	{group.ErrInvalidRecord, api.CodeCoordinatorNotAvailable},

	// memory: the broker's request and reply budget is in use, or a
	// request would need more of it than it could ever hold.
	{memory.ErrExhausted, api.CodeBrokerBusy},
	{memory.ErrNeverFits, api.CodeBodyTooLarge},

	// metadata: the quorum and the controller.
	{metadata.ErrUnknownTopic, api.CodeUnknownTopic},
	{metadata.ErrTopicExists, api.CodeTopicAlreadyExists},
	{metadata.ErrInvalidTopic, api.CodeInvalidArgument},
	{metadata.ErrUnknownPartition, api.CodeUnknownPartition},
	{metadata.ErrStalePartitionCount, api.CodeInvalidPartitions},
	{metadata.ErrInvalidPartitions, api.CodeInvalidPartitions},
	{metadata.ErrInvalidReplicationFactor, api.CodeInvalidReplicationFactor},
	{metadata.ErrInvalidConfig, api.CodeInvalidConfig},
	{metadata.ErrInternalTopic, api.CodeInternalTopic},
	{metadata.ErrInvalidAssignment, api.CodeInvalidArgument},
	{metadata.ErrReassignmentInfeasible, api.CodeReassignmentInfeasible},
	{metadata.ErrReassignmentInProgress, api.CodeReassignmentInProgress},
	{metadata.ErrNoReassignmentInProgress, api.CodeNoReassignmentInProgress},
	{metadata.ErrBrokerNotEmpty, api.CodeBrokerNotEmpty},
	{metadata.ErrVoterNotReplaceable, api.CodeVoterNotReplaceable},
	{metadata.ErrUnknownBroker, api.CodeUnknownBroker},
	{metadata.ErrNotController, api.CodeNotController},
	{metadata.ErrNotReady, api.CodeNotReady},
	{metadata.ErrRequestTimedOut, api.CodeRequestTimedOut},
	{metadata.ErrInvalidCommand, api.CodeInvalidArgument},
	// Another broker's block of producer ids committed first: ask again.
	{metadata.ErrStaleProducerIDs, api.CodeNotController},
	{metadata.ErrInvalidUser, api.CodeInvalidArgument},
	// Fencing of the replicas' own proposals (leader epochs, partition
	// epochs, ISR changes): a leadership or reassignment moved meanwhile.
	{metadata.ErrFencedLeaderEpoch, api.CodeLeaderNotAvailable},
	{metadata.ErrStalePartitionEpoch, api.CodeLeaderNotAvailable},
	{metadata.ErrNotLeader, api.CodeLeaderNotAvailable},
	{metadata.ErrInvalidISR, api.CodeLeaderNotAvailable},
	// This broker's registration was superseded; it registers again.
	{metadata.ErrStaleBrokerEpoch, api.CodeNotReady},
}

func errUnknownTopic(topic string) error {
	return api.Errorf(api.CodeUnknownTopic, "topic %q does not exist", topic)
}

func errUnknownPartition(topic string, p int32, n int32) error {
	return api.Errorf(api.CodeUnknownPartition, "topic %q has no partition %d (it has %d)", topic, p, n)
}

func errNotReady(format string, args ...any) error {
	e := api.Errorf(api.CodeNotReady, format, args...)
	e.RetryAfterMs = 1000
	return e
}
