package client

import "github.com/kairolog/kairolog/broker/api"

// The error codes of the broker API (package api holds the one table of
// codes and statuses); docs/api.md lists the status each maps to.
const (
	CodeInvalidJSON              = api.CodeInvalidJSON
	CodeInvalidArgument          = api.CodeInvalidArgument
	CodeMissingField             = api.CodeMissingField
	CodeInvalidConfig            = api.CodeInvalidConfig
	CodeInvalidPartitions        = api.CodeInvalidPartitions
	CodeInvalidReplicationFactor = api.CodeInvalidReplicationFactor
	CodeNoActiveMembers          = api.CodeNoActiveMembers

	CodeNotFound         = api.CodeNotFound
	CodeUnknownTopic     = api.CodeUnknownTopic
	CodeUnknownPartition = api.CodeUnknownPartition
	CodeUnknownGroup     = api.CodeUnknownGroup
	CodeUnknownMemberID  = api.CodeUnknownMemberID
	CodeUnknownBroker    = api.CodeUnknownBroker

	CodeInternalTopic = api.CodeInternalTopic

	CodeMethodNotAllowed = api.CodeMethodNotAllowed

	CodeTopicAlreadyExists           = api.CodeTopicAlreadyExists
	CodeIllegalGeneration            = api.CodeIllegalGeneration
	CodeRebalanceInProgress          = api.CodeRebalanceInProgress
	CodeNonEmptyGroup                = api.CodeNonEmptyGroup
	CodeReassignmentInfeasible       = api.CodeReassignmentInfeasible
	CodeBrokerNotEmpty               = api.CodeBrokerNotEmpty
	CodeVoterNotReplaceable          = api.CodeVoterNotReplaceable
	CodeReassignmentInProgress       = api.CodeReassignmentInProgress
	CodeTopicDeletionInProgress      = api.CodeTopicDeletionInProgress
	CodeBodyTooLarge                 = api.CodeBodyTooLarge
	CodeBodyTimeout                  = api.CodeBodyTimeout
	CodeRecordTooLarge               = api.CodeRecordTooLarge
	CodeUnsupportedMediaType         = api.CodeUnsupportedMediaType
	CodeOffsetOutOfRange             = api.CodeOffsetOutOfRange
	CodeNotReady                     = api.CodeNotReady
	CodeNotEnoughReplicas            = api.CodeNotEnoughReplicas
	CodeNotEnoughReplicasAfterAppend = api.CodeNotEnoughReplicasAfterAppend
	CodeLeaderNotAvailable           = api.CodeLeaderNotAvailable
	CodeCoordinatorNotAvailable      = api.CodeCoordinatorNotAvailable
	CodeNotController                = api.CodeNotController
	CodeStorageError                 = api.CodeStorageError
	CodeBrokerBusy                   = api.CodeBrokerBusy
	CodeRequestTimedOut              = api.CodeRequestTimedOut
	CodeInternal                     = api.CodeInternal
	CodeBrokerUnavailable            = api.CodeBrokerUnavailable
	CodeOutOfOrderSequence           = api.CodeOutOfOrderSequence
	CodeInvalidProducerEpoch         = api.CodeInvalidProducerEpoch
)

// StatusForCode is the HTTP status the broker answers with for an error code;
// unknown codes are internal errors.
func StatusForCode(code string) int { return api.StatusForCode(code) }

// Error is a failed API call: the reply's status and its JSON error body.
// It is also the error type the broker uses internally, so a reply proxied
// from another broker keeps its code.
type Error = api.Error

// ErrorBody is the JSON shape of every error reply.
type ErrorBody = api.ErrorBody

// ProduceOutcome is what a failed produce reply says about its records
// (see api.ProduceOutcome).
type ProduceOutcome = api.ProduceOutcome

// Errorf builds an *Error with the status that belongs to code.
func Errorf(code, format string, args ...any) *Error { return api.Errorf(code, format, args...) }

// IsCode reports whether err is (or wraps) an *Error with the given code.
func IsCode(err error, code string) bool { return api.IsCode(err, code) }
