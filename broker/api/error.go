package api

import (
	"errors"
	"fmt"
	"net/http"
)

// Error is a failed request: its status, code and message, and the
// details some codes carry. The broker's packages return it, the front
// doors and the peer transport write it as ErrorBody, and clients decode
// it back, so an error proxied from another broker keeps its code.
type Error struct {
	Status  int
	Code    string
	Message string
	// LogStartOffset and HighWatermark accompany OFFSET_OUT_OF_RANGE
	// (LogEndOffset too, between brokers).
	LogStartOffset *int64
	HighWatermark  *int64
	LogEndOffset   *int64
	// Leader and LeaderEpoch accompany NOT_LEADER between brokers: who
	// leads now, as the answering broker knows it.
	Leader      *int32
	LeaderEpoch *int32
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
	LogEndOffset   *int64 `json:"log_end_offset,omitempty"`
	Leader         *int32 `json:"leader,omitempty"`
	LeaderEpoch    *int32 `json:"leader_epoch,omitempty"`
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
		HighWatermark: e.HighWatermark, LogEndOffset: e.LogEndOffset, Leader: e.Leader,
		LeaderEpoch: e.LeaderEpoch, RetryAfterMs: e.RetryAfterMs}
	if o := e.Produce; o != nil {
		b.Topic, b.Partition, b.Offset, b.Records, b.Partial = o.Topic, o.Partition, o.Offset, o.Records, o.Partial
	}
	return b
}

// ProduceOutcome is the ProduceOutcome an error body carries, or nil.
func (b *ErrorBody) ProduceOutcome() *ProduceOutcome {
	if b.Topic == "" && b.Partition == nil && b.Offset == nil && b.Records == nil && !b.Partial {
		return nil
	}
	return &ProduceOutcome{Topic: b.Topic, Partition: b.Partition, Offset: b.Offset, Records: b.Records, Partial: b.Partial}
}

// FromBody is the *Error a reply with status and body b stands for.
func FromBody(status int, b ErrorBody) *Error {
	return &Error{Status: status, Code: b.Code, Message: b.Error, LogStartOffset: b.LogStartOffset,
		HighWatermark: b.HighWatermark, LogEndOffset: b.LogEndOffset, Leader: b.Leader,
		LeaderEpoch: b.LeaderEpoch, RetryAfterMs: b.RetryAfterMs, Produce: b.ProduceOutcome()}
}

// IsCode reports whether err is (or wraps) an *Error with the given code.
func IsCode(err error, code string) bool {
	if err == nil {
		return false // the common case, without the allocation errors.As costs
	}
	var e *Error
	return errors.As(err, &e) && e.Code == code
}
