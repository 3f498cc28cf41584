package metadata

import (
	"errors"
	"fmt"

	"github.com/kairolog/kairolog/broker/api"
)

// Validation and fencing errors. Commands that fail validation leave the
// image unchanged and return one of these (possibly wrapped with %w), so
// callers check them with errors.Is and map them to API codes with Code.
var (
	ErrUnknownTopic      = errors.New("unknown topic")
	ErrTopicExists       = errors.New("topic already exists")
	ErrInvalidTopic      = errors.New("invalid topic name")
	ErrUnknownPartition  = errors.New("unknown partition")
	ErrInvalidPartitions = errors.New("invalid partition count")
	// ErrStalePartitionCount: a CreatePartitions planned from a partition
	// count the topic no longer has (an INVALID_PARTITIONS to clients).
	ErrStalePartitionCount      = fmt.Errorf("%w: the partition count changed", ErrInvalidPartitions)
	ErrInvalidReplicationFactor = errors.New("invalid replication factor")
	ErrInvalidConfig            = errors.New("invalid topic config")
	// ErrInternalTopic refuses a config, partition-count or delete change
	// of an internal topic (__consumer_offsets): the brokers alone manage
	// it, and such a change would lose or remap every group's state.
	ErrInternalTopic          = errors.New("internal topic")
	ErrInvalidAssignment      = errors.New("invalid replica assignment")
	ErrReassignmentInfeasible = errors.New("reassignment infeasible")
	ErrReassignmentInProgress = errors.New("reassignment in progress")
	// ErrNoReassignmentInProgress: a cancellation of a partition that is
	// not being reassigned.
	ErrNoReassignmentInProgress = errors.New("no reassignment in progress")
	ErrBrokerNotEmpty           = errors.New("broker still holds replicas")
	ErrVoterNotReplaceable      = errors.New("no broker can take the voter's place in the metadata quorum")
	ErrUnknownBroker            = errors.New("unknown broker")
	ErrNotController            = errors.New("not the controller")
	ErrFencedLeaderEpoch        = errors.New("stale leader epoch")
	ErrStalePartitionEpoch      = errors.New("stale partition epoch")
	ErrNotLeader                = errors.New("not the partition leader")
	ErrInvalidISR               = errors.New("invalid ISR")
	ErrStaleBrokerEpoch         = errors.New("stale broker epoch")
	ErrInvalidCommand           = errors.New("invalid metadata command")
	ErrNotReady                 = errors.New("metadata not ready")
	ErrRequestTimedOut          = errors.New("request timed out")
	// ErrStaleProducerIDs: an AllocateIDs planned from a next producer id
	// the image no longer has (another block was handed out meanwhile).
	ErrStaleProducerIDs = errors.New("producer id block already handed out")
	ErrInvalidUser      = errors.New("invalid user")
)

// codes names the API code of each error; package api holds the HTTP
// status of every code.
var codes = []struct {
	err  error
	code string
}{
	{ErrUnknownTopic, api.CodeUnknownTopic},
	{ErrTopicExists, api.CodeTopicAlreadyExists},
	{ErrInvalidTopic, api.CodeInvalidArgument},
	{ErrUnknownPartition, api.CodeUnknownPartition},
	{ErrInvalidPartitions, api.CodeInvalidPartitions},
	{ErrInvalidReplicationFactor, api.CodeInvalidReplicationFactor},
	{ErrInvalidConfig, api.CodeInvalidConfig},
	{ErrInternalTopic, api.CodeInternalTopic},
	{ErrInvalidAssignment, api.CodeInvalidArgument},
	{ErrReassignmentInfeasible, api.CodeReassignmentInfeasible},
	{ErrReassignmentInProgress, api.CodeReassignmentInProgress},
	{ErrNoReassignmentInProgress, api.CodeNoReassignmentInProgress},
	{ErrBrokerNotEmpty, api.CodeBrokerNotEmpty},
	{ErrVoterNotReplaceable, api.CodeVoterNotReplaceable},
	{ErrUnknownBroker, api.CodeUnknownBroker},
	{ErrNotController, api.CodeNotController},
	{ErrFencedLeaderEpoch, api.CodeFencedLeaderEpoch},
	{ErrStalePartitionEpoch, api.CodeStalePartitionEpoch},
	{ErrNotLeader, api.CodeNotLeader},
	{ErrInvalidISR, api.CodeInvalidISR},
	{ErrStaleBrokerEpoch, api.CodeStaleBrokerEpoch},
	{ErrInvalidCommand, api.CodeInvalidArgument},
	{ErrNotReady, api.CodeNotReady},
	{ErrRequestTimedOut, api.CodeRequestTimedOut},
	{ErrStaleProducerIDs, api.CodeNotController},
	{ErrInvalidUser, api.CodeInvalidArgument},
}

// Code returns the API error code of err ("UNKNOWN_TOPIC", …) and the HTTP
// status that goes with it (docs/api.md). Errors this package does not know
// are "INTERNAL" with 500.
func Code(err error) (code string, status int) {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code, api.StatusForCode(c.code)
		}
	}
	return api.CodeInternal, api.StatusForCode(api.CodeInternal)
}

// ErrorForCode is the inverse of Code for errors carried between brokers:
// it returns the sentinel behind code, or nil when code is unknown.
// Codes shared by several sentinels map to the first one listed.
func ErrorForCode(code string) error {
	for _, c := range codes {
		if c.code == code {
			return c.err
		}
	}
	return nil
}
