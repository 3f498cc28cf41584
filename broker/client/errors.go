package client

import (
	"errors"
	"fmt"
	"net/http"
)

// Error codes of the broker API. Every error reply carries one of these in its
// "code" field; docs/api.md lists the status each maps to.
const (
	CodeInvalidJSON              = "INVALID_JSON"
	CodeInvalidArgument          = "INVALID_ARGUMENT"
	CodeMissingField             = "MISSING_FIELD"
	CodeInvalidConfig            = "INVALID_CONFIG"
	CodeInvalidPartitions        = "INVALID_PARTITIONS"
	CodeInvalidReplicationFactor = "INVALID_REPLICATION_FACTOR"
	CodeNoActiveMembers          = "NO_ACTIVE_MEMBERS"

	CodeNotFound         = "NOT_FOUND"
	CodeUnknownTopic     = "UNKNOWN_TOPIC"
	CodeUnknownPartition = "UNKNOWN_PARTITION"
	CodeUnknownGroup     = "UNKNOWN_GROUP"
	CodeUnknownMemberID  = "UNKNOWN_MEMBER_ID"
	CodeUnknownBroker    = "UNKNOWN_BROKER"

	CodeInternalTopic = "INTERNAL_TOPIC"

	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"

	CodeTopicAlreadyExists      = "TOPIC_ALREADY_EXISTS"
	CodeIllegalGeneration       = "ILLEGAL_GENERATION"
	CodeRebalanceInProgress     = "REBALANCE_IN_PROGRESS"
	CodeNonEmptyGroup           = "NON_EMPTY_GROUP"
	CodeReassignmentInfeasible  = "REASSIGNMENT_INFEASIBLE"
	CodeBrokerNotEmpty          = "BROKER_NOT_EMPTY"
	CodeVoterNotReplaceable     = "VOTER_NOT_REPLACEABLE"
	CodeReassignmentInProgress  = "REASSIGNMENT_IN_PROGRESS"
	CodeTopicDeletionInProgress = "TOPIC_DELETION_IN_PROGRESS"
	CodeBodyTooLarge            = "BODY_TOO_LARGE"
	CodeRecordTooLarge          = "RECORD_TOO_LARGE"
	CodeUnsupportedMediaType    = "UNSUPPORTED_MEDIA_TYPE"
	CodeOffsetOutOfRange        = "OFFSET_OUT_OF_RANGE"
	CodeNotReady                = "NOT_READY"
	CodeNotEnoughReplicas       = "NOT_ENOUGH_REPLICAS"
	// CodeNotEnoughReplicasAfterAppend: acks=all, the records were
	// written and committed (the high watermark covers them), but the ISR
	// fell below min.insync.replicas while the producer waited, so they are
	// on fewer replicas than it asked for (Kafka's
	// NOT_ENOUGH_REPLICAS_AFTER_APPEND, code 20). Unlike NOT_ENOUGH_REPLICAS
	// (nothing written), sending them again stores them twice.
	CodeNotEnoughReplicasAfterAppend = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
	CodeLeaderNotAvailable           = "LEADER_NOT_AVAILABLE"
	CodeCoordinatorNotAvailable      = "COORDINATOR_NOT_AVAILABLE"
	CodeNotController                = "NOT_CONTROLLER"
	CodeStorageError                 = "STORAGE_ERROR"
	CodeRequestTimedOut              = "REQUEST_TIMED_OUT"
	CodeInternal                     = "INTERNAL"
	CodeBrokerUnavailable            = "BROKER_UNAVAILABLE"
)

var codeStatus = map[string]int{
	CodeInvalidJSON:              http.StatusBadRequest,
	CodeInvalidArgument:          http.StatusBadRequest,
	CodeMissingField:             http.StatusBadRequest,
	CodeInvalidConfig:            http.StatusBadRequest,
	CodeInvalidPartitions:        http.StatusBadRequest,
	CodeInvalidReplicationFactor: http.StatusBadRequest,
	CodeNoActiveMembers:          http.StatusBadRequest,

	CodeNotFound:         http.StatusNotFound,
	CodeUnknownTopic:     http.StatusNotFound,
	CodeUnknownPartition: http.StatusNotFound,
	CodeUnknownGroup:     http.StatusNotFound,
	CodeUnknownMemberID:  http.StatusNotFound,
	CodeUnknownBroker:    http.StatusNotFound,

	CodeInternalTopic: http.StatusForbidden,

	CodeMethodNotAllowed: http.StatusMethodNotAllowed,

	CodeTopicAlreadyExists:     http.StatusConflict,
	CodeIllegalGeneration:      http.StatusConflict,
	CodeRebalanceInProgress:    http.StatusConflict,
	CodeNonEmptyGroup:          http.StatusConflict,
	CodeReassignmentInfeasible: http.StatusConflict,
	CodeBrokerNotEmpty:         http.StatusConflict,
	CodeVoterNotReplaceable:    http.StatusConflict,
	CodeReassignmentInProgress: http.StatusConflict,

	CodeBodyTooLarge:         http.StatusRequestEntityTooLarge,
	CodeRecordTooLarge:       http.StatusRequestEntityTooLarge,
	CodeUnsupportedMediaType: http.StatusUnsupportedMediaType,
	CodeOffsetOutOfRange:     http.StatusRequestedRangeNotSatisfiable,

	CodeNotReady:                     http.StatusServiceUnavailable,
	CodeNotEnoughReplicas:            http.StatusServiceUnavailable,
	CodeNotEnoughReplicasAfterAppend: http.StatusServiceUnavailable,
	CodeLeaderNotAvailable:           http.StatusServiceUnavailable,
	CodeCoordinatorNotAvailable:      http.StatusServiceUnavailable,
	CodeNotController:                http.StatusServiceUnavailable,
	CodeStorageError:                 http.StatusServiceUnavailable,
	CodeRequestTimedOut:              http.StatusServiceUnavailable,
	CodeBrokerUnavailable:            http.StatusServiceUnavailable,

	CodeInternal: http.StatusInternalServerError,
}

// StatusForCode is the HTTP status the broker answers with for an error code;
// unknown codes are internal errors.
func StatusForCode(code string) int {
	if s, ok := codeStatus[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Error is a failed API call: the reply's status and its JSON error body. It is
// also the error type the broker uses internally, so a reply proxied from
// another broker keeps its code.
type Error struct {
	Status  int
	Code    string
	Message string
	// LogStartOffset and HighWatermark accompany OFFSET_OUT_OF_RANGE.
	LogStartOffset *int64
	HighWatermark  *int64
	// RetryAfterMs is a hint on retriable (503) errors; 0 means none.
	RetryAfterMs int64
	// Produce accompanies a failed produce: where its records are (see
	// ProduceOutcome); nil for every other request.
	Produce *ProduceOutcome
}

// ProduceOutcome is what a failed produce reply says about its records, so
// that a producer retries only what was not stored. A single-record
// request names the record's Partition once the broker chose it, and its
// Offset when the record is stored all the same
// (NOT_ENOUGH_REPLICAS_AFTER_APPEND). A batch request ("records") has one
// entry per request record in Records, in request order; Partial says that
// some of them were stored and others not.
type ProduceOutcome struct {
	Topic     string
	Partition *int32
	Offset    *int64
	Records   []RecordPosition
	Partial   bool
}

// Errorf builds an *Error with the status that belongs to code.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Status: StatusForCode(code), Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("%s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// Retriable reports whether the same request may succeed later: the
// broker's 503s, and a gateway's 502 and 504 in front of it.
func (e *Error) Retriable() bool {
	switch e.Status {
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// ErrorBody is the JSON shape of every error reply.
type ErrorBody struct {
	Error          string `json:"error"`
	Code           string `json:"code"`
	LogStartOffset *int64 `json:"log_start_offset,omitempty"`
	HighWatermark  *int64 `json:"high_watermark,omitempty"`
	RetryAfterMs   int64  `json:"retry_after_ms,omitempty"`
	// Topic, Partition, Offset, Records and Partial carry a failed
	// produce's ProduceOutcome.
	Topic     string           `json:"topic,omitempty"`
	Partition *int32           `json:"partition,omitempty"`
	Offset    *int64           `json:"offset,omitempty"`
	Records   []RecordPosition `json:"records,omitempty"`
	Partial   bool             `json:"partial,omitempty"`
}

// Body is the reply body for e.
func (e *Error) Body() ErrorBody {
	b := ErrorBody{Error: e.Message, Code: e.Code, LogStartOffset: e.LogStartOffset,
		HighWatermark: e.HighWatermark, RetryAfterMs: e.RetryAfterMs}
	if o := e.Produce; o != nil {
		b.Topic, b.Partition, b.Offset, b.Records, b.Partial = o.Topic, o.Partition, o.Offset, o.Records, o.Partial
	}
	return b
}

// produceOutcome is the ProduceOutcome an error body carries, or nil.
func (b *ErrorBody) produceOutcome() *ProduceOutcome {
	if b.Topic == "" && b.Partition == nil && b.Offset == nil && b.Records == nil && !b.Partial {
		return nil
	}
	return &ProduceOutcome{Topic: b.Topic, Partition: b.Partition, Offset: b.Offset, Records: b.Records, Partial: b.Partial}
}

// IsCode reports whether err is (or wraps) an *Error with the given code.
func IsCode(err error, code string) bool {
	if err == nil {
		return false // the common case, without the allocation errors.As costs
	}
	var e *Error
	return errors.As(err, &e) && e.Code == code
}
