package cluster

import (
	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// The errors of package metadata, re-exported for callers of Node: check
// them with errors.Is, and map any of them to an API code and status with
// ErrorCode.
var (
	ErrUnknownTopic             = metadata.ErrUnknownTopic
	ErrTopicExists              = metadata.ErrTopicExists
	ErrInvalidTopic             = metadata.ErrInvalidTopic
	ErrUnknownPartition         = metadata.ErrUnknownPartition
	ErrInvalidPartitions        = metadata.ErrInvalidPartitions
	ErrInvalidReplicationFactor = metadata.ErrInvalidReplicationFactor
	ErrInvalidConfig            = metadata.ErrInvalidConfig
	ErrInternalTopic            = metadata.ErrInternalTopic
	ErrInvalidAssignment        = metadata.ErrInvalidAssignment
	ErrReassignmentInfeasible   = metadata.ErrReassignmentInfeasible
	ErrReassignmentInProgress   = metadata.ErrReassignmentInProgress
	ErrNoReassignmentInProgress = metadata.ErrNoReassignmentInProgress
	ErrBrokerNotEmpty           = metadata.ErrBrokerNotEmpty
	ErrVoterNotReplaceable      = metadata.ErrVoterNotReplaceable
	ErrUnknownBroker            = metadata.ErrUnknownBroker
	ErrNotController            = metadata.ErrNotController
	ErrFencedLeaderEpoch        = metadata.ErrFencedLeaderEpoch
	ErrStalePartitionEpoch      = metadata.ErrStalePartitionEpoch
	ErrNotLeader                = metadata.ErrNotLeader
	ErrInvalidISR               = metadata.ErrInvalidISR
	ErrNotReady                 = metadata.ErrNotReady
	ErrRequestTimedOut          = metadata.ErrRequestTimedOut
)

// ErrorCode returns the API code ("UNKNOWN_TOPIC", …) and HTTP status of
// an error returned by this package.
func ErrorCode(err error) (code string, status int) { return metadata.Code(err) }

// remoteError is an error the controller returned over the peer
// transport: its message as sent, the sentinel its code names, so
// errors.Is works across brokers, and the reply itself, so a broker
// passing it on keeps its code and status.
type remoteError struct {
	msg      string
	sentinel error
	wire     *api.Error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.sentinel }
