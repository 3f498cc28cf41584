package broker

import (
	"context"
	"errors"
	"io/fs"

	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
	"github.com/kairolog/kairolog/broker/group"
	"github.com/kairolog/kairolog/broker/memory"
	"github.com/kairolog/kairolog/broker/replica"
	"github.com/kairolog/kairolog/broker/storage"
)

// ClientError is what a client is told about err: the *client.Error whose
// code (and through it the HTTP status) fits the cause. This is the one
// place where errors of the packages below the broker (storage, replica,
// group, the metadata quorum) get their client-facing codes; errorRules
// lists every one of their errors, and TestEveryCoreErrorHasAClientCode
// keeps it so.
//
// What a leader change, a shutdown or a corrupt batch causes is a 503 the
// client retries (LEADER_NOT_AVAILABLE, NOT_READY, STORAGE_ERROR …), with
// a retry hint. ok is false for an error no rule knows: only a bug makes
// one, and the server logs it and answers 500 INTERNAL.
func ClientError(err error) (e *client.Error, ok bool) {
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
		e := client.Errorf(client.CodeOffsetOutOfRange, "offset %d is outside [%d, %d]", oor.Offset, oor.LogStartOffset, oor.HighWatermark)
		e.LogStartOffset, e.HighWatermark = &oor.LogStartOffset, &oor.HighWatermark
		return e, true
	}
	var soor *storage.OffsetOutOfRangeError
	if errors.As(err, &soor) {
		e := client.Errorf(client.CodeOffsetOutOfRange, "offset %d is outside [%d, %d]", soor.Offset, soor.LogStartOffset, soor.LogEndOffset)
		e.LogStartOffset, e.HighWatermark = &soor.LogStartOffset, &soor.LogEndOffset
		return e, true
	}
	var notLeader *replica.NotLeaderError
	if errors.As(err, &notLeader) {
		return client.Errorf(client.CodeLeaderNotAvailable, "%v", err), true
	}
	for _, rule := range errorRules {
		if errors.Is(err, rule.err) {
			return client.Errorf(rule.code, "%v", err), true
		}
	}
	var pathErr *fs.PathError
	switch {
	case errors.As(err, &pathErr):
		// A file of a partition log could not be read or written: a disk
		// error, a full disk.
		return client.Errorf(client.CodeStorageError, "%v", err), true
	case errors.Is(err, context.DeadlineExceeded):
		return client.Errorf(client.CodeRequestTimedOut, "%v", err), true
	case errors.Is(err, context.Canceled):
		return client.Errorf(client.CodeRequestTimedOut, "request cancelled: %v", err), true
	}
	return nil, false
}

// defaultRetryAfterMs is the retry hint of a retriable error that names
// none of its own.
const defaultRetryAfterMs = 500

// apiError is ClientError for the broker's own methods: an error no rule
// knows passes through unchanged, so the server logs its cause.
func apiError(err error) error {
	if e, ok := ClientError(err); ok {
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
	{storage.ErrOffsetOutOfRange, client.CodeOffsetOutOfRange},
	{storage.ErrBatchTooLarge, client.CodeRecordTooLarge},
	{storage.ErrEmptyBatch, client.CodeInvalidArgument},
	// A batch stamped with an epoch older than the log's latest: this
	// broker led in an epoch that has since ended (a leader change raced
	// the append).
	{storage.ErrStaleEpoch, client.CodeLeaderNotAvailable},
	// Follower appends only: the log moved under a fetch (truncated after
	// a leader change).
	{storage.ErrNotContiguous, client.CodeLeaderNotAvailable},
	// Stored bytes fail their CRC: another replica may take over.
	{storage.ErrCorrupt, client.CodeStorageError},
	{storage.ErrCorruptPartitionMetadata, client.CodeStorageError},
	// An fsync of the partition's log failed: the replica is offline until
	// its broker restarts; another replica may take over.
	{storage.ErrLogFailed, client.CodeStorageError},
	// The log closed under the request: the partition moved away or the
	// broker is stopping.
	{storage.ErrClosed, client.CodeLeaderNotAvailable},

	// replica: leadership, ISR and high watermark.
	{replica.ErrUnknownPartition, client.CodeUnknownPartition},
	{replica.ErrNotEnoughReplicas, client.CodeNotEnoughReplicas},
	{replica.ErrNotEnoughReplicasAfterAppend, client.CodeNotEnoughReplicasAfterAppend},
	{replica.ErrTimeout, client.CodeRequestTimedOut},
	{replica.ErrLeaderMovedAfterAppend, client.CodeLeaderNotAvailable},
	{replica.ErrFencedLeaderEpoch, client.CodeLeaderNotAvailable},
	{replica.ErrUnknownLeaderEpoch, client.CodeLeaderNotAvailable},
	{replica.ErrNotReplica, client.CodeLeaderNotAvailable},
	// The topic was deleted and created again, and this broker or the
	// one that sent the request has not caught up with it yet.
	{replica.ErrInconsistentTopicID, client.CodeLeaderNotAvailable},
	// This broker was stopped or stalled, or cannot reach the controller:
	// it does not act as leader until a heartbeat confirms its metadata.
	{replica.ErrMetadataNotCurrent, client.CodeLeaderNotAvailable},
	{replica.ErrClosed, client.CodeNotReady},

	// group: consumer-group coordinators.
	{group.ErrInvalidArgument, client.CodeInvalidArgument},
	{group.ErrUnknownGroup, client.CodeUnknownGroup},
	{group.ErrUnknownMember, client.CodeUnknownMemberID},
	{group.ErrIllegalGeneration, client.CodeIllegalGeneration},
	{group.ErrRebalanceInProgress, client.CodeRebalanceInProgress},
	{group.ErrNonEmptyGroup, client.CodeNonEmptyGroup},
	{group.ErrNoActiveMembers, client.CodeNoActiveMembers},
	{group.ErrUnknownTopic, client.CodeUnknownTopic},
	{group.ErrUnknownPartition, client.CodeUnknownPartition},
	{group.ErrCoordinatorNotAvailable, client.CodeCoordinatorNotAvailable},
	// A group journal record that does not decode: the coordinator cannot
	// load the group here; another replica of its partition may.
	{group.ErrInvalidRecord, client.CodeCoordinatorNotAvailable},

	// memory: the broker's request and reply budget is in use.
	{memory.ErrExhausted, client.CodeBrokerBusy},

	// metadata: the quorum and the controller.
	{metadata.ErrUnknownTopic, client.CodeUnknownTopic},
	{metadata.ErrTopicExists, client.CodeTopicAlreadyExists},
	{metadata.ErrInvalidTopic, client.CodeInvalidArgument},
	{metadata.ErrUnknownPartition, client.CodeUnknownPartition},
	{metadata.ErrStalePartitionCount, client.CodeInvalidPartitions},
	{metadata.ErrInvalidPartitions, client.CodeInvalidPartitions},
	{metadata.ErrInvalidReplicationFactor, client.CodeInvalidReplicationFactor},
	{metadata.ErrInvalidConfig, client.CodeInvalidConfig},
	{metadata.ErrInternalTopic, client.CodeInternalTopic},
	{metadata.ErrInvalidAssignment, client.CodeInvalidArgument},
	{metadata.ErrReassignmentInfeasible, client.CodeReassignmentInfeasible},
	{metadata.ErrReassignmentInProgress, client.CodeReassignmentInProgress},
	{metadata.ErrBrokerNotEmpty, client.CodeBrokerNotEmpty},
	{metadata.ErrVoterNotReplaceable, client.CodeVoterNotReplaceable},
	{metadata.ErrUnknownBroker, client.CodeUnknownBroker},
	{metadata.ErrNotController, client.CodeNotController},
	{metadata.ErrNotReady, client.CodeNotReady},
	{metadata.ErrRequestTimedOut, client.CodeRequestTimedOut},
	{metadata.ErrInvalidCommand, client.CodeInvalidArgument},
	// Fencing of the replicas' own proposals (leader epochs, partition
	// epochs, ISR changes): a leadership or reassignment moved meanwhile.
	{metadata.ErrFencedLeaderEpoch, client.CodeLeaderNotAvailable},
	{metadata.ErrStalePartitionEpoch, client.CodeLeaderNotAvailable},
	{metadata.ErrNotLeader, client.CodeLeaderNotAvailable},
	{metadata.ErrInvalidISR, client.CodeLeaderNotAvailable},
	// This broker's registration was superseded; it registers again.
	{metadata.ErrStaleBrokerEpoch, client.CodeNotReady},
}

func errUnknownTopic(topic string) error {
	return client.Errorf(client.CodeUnknownTopic, "topic %q does not exist", topic)
}

func errUnknownPartition(topic string, p int32, n int32) error {
	return client.Errorf(client.CodeUnknownPartition, "topic %q has no partition %d (it has %d)", topic, p, n)
}

func errNotReady(format string, args ...any) error {
	e := client.Errorf(client.CodeNotReady, format, args...)
	e.RetryAfterMs = 1000
	return e
}
