package broker

import (
	"context"
	"errors"

	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
	"github.com/kairolog/kairolog/broker/group"
	"github.com/kairolog/kairolog/broker/replica"
	"github.com/kairolog/kairolog/broker/storage"
)

// apiError turns an error of the packages below into the *client.Error the
// HTTP layer answers with. Errors no rule knows pass through unchanged: the
// server logs them and answers 500, since only a bug produces them.
func apiError(err error) error {
	if err == nil {
		return nil
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce
	}
	var notLeader *replica.NotLeaderError
	if errors.As(err, &notLeader) {
		e := client.Errorf(client.CodeLeaderNotAvailable, "%v", err)
		e.RetryAfterMs = 500
		return e
	}
	var oor *replica.OffsetOutOfRangeError
	if errors.As(err, &oor) {
		e := client.Errorf(client.CodeOffsetOutOfRange, "offset %d is outside [%d, %d]", oor.Offset, oor.LogStartOffset, oor.HighWatermark)
		e.LogStartOffset, e.HighWatermark = &oor.LogStartOffset, &oor.HighWatermark
		return e
	}
	var soor *storage.OffsetOutOfRangeError
	if errors.As(err, &soor) {
		e := client.Errorf(client.CodeOffsetOutOfRange, "offset %d is outside [%d, %d]", soor.Offset, soor.LogStartOffset, soor.LogEndOffset)
		e.LogStartOffset, e.HighWatermark = &soor.LogStartOffset, &soor.LogEndOffset
		return e
	}
	for _, rule := range errorRules {
		if errors.Is(err, rule.err) {
			e := client.Errorf(rule.code, "%v", err)
			if e.Retriable() {
				e.RetryAfterMs = 500
			}
			return e
		}
	}
	if code, _ := metadata.Code(err); code != "INTERNAL" {
		if _, known := knownCodes[code]; known {
			return client.Errorf(code, "%v", err)
		}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return client.Errorf(client.CodeRequestTimedOut, "%v", err)
	case errors.Is(err, context.Canceled):
		return client.Errorf(client.CodeRequestTimedOut, "request cancelled: %v", err)
	}
	return err
}

var errorRules = []struct {
	err  error
	code string
}{
	{replica.ErrUnknownPartition, client.CodeUnknownPartition},
	{replica.ErrNotEnoughReplicas, client.CodeNotEnoughReplicas},
	{replica.ErrNotEnoughReplicasAfterAppend, client.CodeNotEnoughReplicasAfterAppend},
	{replica.ErrTimeout, client.CodeRequestTimedOut},
	{replica.ErrLeaderMovedAfterAppend, client.CodeLeaderNotAvailable},
	{replica.ErrFencedLeaderEpoch, client.CodeLeaderNotAvailable},
	{replica.ErrUnknownLeaderEpoch, client.CodeLeaderNotAvailable},
	{replica.ErrClosed, client.CodeNotReady},
	{storage.ErrBatchTooLarge, client.CodeRecordTooLarge},
	{storage.ErrClosed, client.CodeLeaderNotAvailable},
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
}

// knownCodes are the codes of docs/api.md; a metadata code outside them
// (internal fencing codes) is not shown to clients as it is.
var knownCodes = map[string]struct{}{}

func init() {
	for _, c := range []string{client.CodeInvalidArgument, client.CodeInvalidConfig, client.CodeInvalidPartitions, client.CodeInternalTopic,
		client.CodeInvalidReplicationFactor, client.CodeUnknownTopic, client.CodeUnknownPartition, client.CodeUnknownBroker,
		client.CodeTopicAlreadyExists, client.CodeReassignmentInfeasible, client.CodeBrokerNotEmpty, client.CodeVoterNotReplaceable,
		client.CodeReassignmentInProgress, client.CodeNotReady, client.CodeNotController, client.CodeRequestTimedOut} {
		knownCodes[c] = struct{}{}
	}
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
