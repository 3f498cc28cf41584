package kafka

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kairolog/kairolog/broker/api"
)

// kafkaCodes maps the core's error codes to Kafka's. A code missing here
// is a core failure the client cannot act on: UNKNOWN_SERVER_ERROR.
var kafkaCodes = map[string]*kerr.Error{
	api.CodeUnknownTopic:                 kerr.UnknownTopicOrPartition,
	api.CodeUnknownPartition:             kerr.UnknownTopicOrPartition,
	api.CodeTopicDeletionInProgress:      kerr.UnknownTopicOrPartition,
	api.CodeInconsistentTopicID:          kerr.InconsistentTopicID,
	api.CodeInternalTopic:                kerr.InvalidTopicException,
	api.CodeNotLeader:                    kerr.NotLeaderForPartition,
	api.CodeLeaderNotAvailable:           kerr.LeaderNotAvailable,
	api.CodeFencedLeaderEpoch:            kerr.FencedLeaderEpoch,
	api.CodeUnknownLeaderEpoch:           kerr.UnknownLeaderEpoch,
	api.CodeOffsetOutOfRange:             kerr.OffsetOutOfRange,
	api.CodeOffsetNotAvailable:           kerr.OffsetNotAvailable,
	api.CodeNotEnoughReplicas:            kerr.NotEnoughReplicas,
	api.CodeNotEnoughReplicasAfterAppend: kerr.NotEnoughReplicasAfterAppend,
	api.CodeRequestTimedOut:              kerr.RequestTimedOut,
	api.CodeRecordTooLarge:               kerr.MessageTooLarge,
	api.CodeBodyTooLarge:                 kerr.MessageTooLarge,
	api.CodeStorageError:                 kerr.KafkaStorageError,
	api.CodeCorruptMessage:               kerr.CorruptMessage,
	api.CodeInvalidRecord:                kerr.InvalidRecord,
	api.CodeOutOfOrderSequence:           kerr.OutOfOrderSequenceNumber,
	api.CodeInvalidProducerEpoch:         kerr.InvalidProducerEpoch,
	api.CodeNotReady:                     kerr.LeaderNotAvailable,
	// The broker's memory is held by other requests: retriable, as a
	// timeout is.
	api.CodeBrokerBusy:                  kerr.RequestTimedOut,
	api.CodeBrokerUnavailable:           kerr.BrokerNotAvailable,
	api.CodeCoordinatorNotAvailable:     kerr.CoordinatorNotAvailable,
	api.CodeNotController:               kerr.NotController,
	api.CodeTopicAlreadyExists:          kerr.TopicAlreadyExists,
	api.CodeInvalidPartitions:           kerr.InvalidPartitions,
	api.CodeInvalidReplicationFactor:    kerr.InvalidReplicationFactor,
	api.CodeInvalidConfig:               kerr.InvalidConfig,
	api.CodeInvalidArgument:             kerr.InvalidRequest,
	api.CodeMissingField:                kerr.InvalidRequest,
	api.CodeUnknownGroup:                kerr.GroupIDNotFound,
	api.CodeUnknownMemberID:             kerr.UnknownMemberID,
	api.CodeIllegalGeneration:           kerr.IllegalGeneration,
	api.CodeRebalanceInProgress:         kerr.RebalanceInProgress,
	api.CodeNonEmptyGroup:               kerr.NonEmptyGroup,
	api.CodeGroupSubscribedToTopic:      kerr.GroupSubscribedToTopic,
	api.CodeInconsistentGroupProtocol:   kerr.InconsistentGroupProtocol,
	api.CodeReassignmentInProgress:      kerr.ReassignmentInProgress,
	api.CodeNoReassignmentInProgress:    kerr.NoReassignmentInProgress,
	api.CodeElectionNotNeeded:           kerr.ElectionNotNeeded,
	api.CodePreferredLeaderNotAvailable: kerr.PreferredLeaderNotAvailable,
	// Authorization (authorize.go).
	api.CodeTopicAuthorizationFailed:   kerr.TopicAuthorizationFailed,
	api.CodeGroupAuthorizationFailed:   kerr.GroupAuthorizationFailed,
	api.CodeClusterAuthorizationFailed: kerr.ClusterAuthorizationFailed,
}

// errorCode is the Kafka error code of a core error: 0 for nil.
func errorCode(err error) int16 {
	if err == nil {
		return 0
	}
	return kafkaError(err).Code
}

// kafkaError is the Kafka error of a core error.
func kafkaError(err error) *kerr.Error {
	var ae *api.Error
	if errors.As(err, &ae) {
		if k, ok := kafkaCodes[ae.Code]; ok {
			return k
		}
		return kerr.UnknownServerError
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return kerr.RequestTimedOut
	}
	return kerr.UnknownServerError
}

// errorMessage is the message a reply that has room for one carries: nil
// when there is no error.
func errorMessage(err error) *string {
	if err == nil {
		return nil
	}
	msg := err.Error()
	return &msg
}

// topicErrorCode is errorCode for a request that may name its topic by id
// (Produce v13+, Fetch v13+): a topic unknown by id is UNKNOWN_TOPIC_ID,
// as Kafka answers, for the client to refresh the ids it holds.
func topicErrorCode(err error, byID bool) int16 {
	if byID && api.IsCode(err, api.CodeUnknownTopic) {
		return kerr.UnknownTopicID.Code
	}
	return errorCode(err)
}
