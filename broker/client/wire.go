package client

// The JSON shapes of POST /produce and GET /fetch: the HTTP API's record
// encoding, where keys, values and header values travel as text or base64.

import "github.com/kairolog/kairolog/broker/api"

// Encodings of keys, values and header values on the wire.
const (
	EncodingUTF8   = "utf8"
	EncodingBase64 = "base64"
)

// Acks values of a produce request.
const (
	AcksLeader = "1"
	AcksAll    = "all"
)

// ProduceRecord is one record of a batch produce. Value is the record's
// payload (the original API calls it "message"). A nil Partition lets the
// broker choose: murmur2 of the key, or round robin without a key.
type ProduceRecord struct {
	Partition *int32            `json:"partition,omitempty"`
	Key       *string           `json:"key,omitempty"`
	Value     string            `json:"value"`
	Headers   map[string]string `json:"headers,omitempty"`
	Timestamp int64             `json:"timestamp,omitempty"`
}

// ProduceRequest is the body of POST /produce. With Records empty it is a
// single record made of Partition, Key, Message, Headers and Timestamp.
type ProduceRequest struct {
	Topic     string            `json:"topic"`
	Partition *int32            `json:"partition,omitempty"`
	Key       *string           `json:"key,omitempty"`
	Message   string            `json:"message,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	Timestamp int64             `json:"timestamp,omitempty"`
	Records   []ProduceRecord   `json:"records,omitempty"`
	Acks      string            `json:"acks,omitempty"`
	TimeoutMs int64             `json:"timeout_ms,omitempty"`
	Encoding  string            `json:"encoding,omitempty"`
	// An idempotent produce (see Producer): the producer's id and epoch
	// from NewProducer, and the sequence number of the first record in
	// the partition. All records must go to one partition.
	ProducerID    *int64 `json:"producer_id,omitempty"`
	ProducerEpoch *int16 `json:"producer_epoch,omitempty"`
	Sequence      *int32 `json:"sequence,omitempty"`
}

// ProduceResponse is the reply of POST /produce. A single-record request
// fills Partition and Offset; a batch fills Records, one entry per request
// record in request order.
//
// Client.Produce also fills it from a failed reply's ProduceOutcome, next
// to the error: then Records say, record by record, which were stored and
// which were not (see RecordPosition), and Offset is set only when the one
// record is stored all the same (NOT_ENOUGH_REPLICAS_AFTER_APPEND).
type ProduceResponse struct {
	Status    string               `json:"status"`
	Topic     string               `json:"topic"`
	Partition *int32               `json:"partition,omitempty"`
	Offset    *int64               `json:"offset,omitempty"`
	Records   []api.RecordPosition `json:"records,omitempty"`
	// Partial: some records were stored and others not (failed replies only).
	Partial bool `json:"partial,omitempty"`
	// Duplicate: an idempotent produce sent again; the first send stored
	// the records where the reply says, and this one wrote nothing.
	Duplicate bool `json:"duplicate,omitempty"`
}

// FetchRequest holds the query parameters of GET /fetch. Negative Offset means
// the log start offset; zero limits mean the broker defaults.
type FetchRequest struct {
	Topic      string
	Partition  int32
	Offset     int64
	MaxRecords int
	MaxBytes   int
	WaitMs     int
	Encoding   string
}

// FetchResponse is the reply of GET /fetch.
type FetchResponse struct {
	Topic          string          `json:"topic"`
	Partition      int32           `json:"partition"`
	Records        []FetchedRecord `json:"records"`
	HighWatermark  int64           `json:"high_watermark"`
	LogStartOffset int64           `json:"log_start_offset"`
	NextOffset     int64           `json:"next_offset"`
}

// FetchedRecord is one record of a fetch reply. Encoding is "base64" when Key,
// Message and header values are base64 (requested, or not valid UTF-8).
type FetchedRecord struct {
	Offset    int64             `json:"offset"`
	Message   string            `json:"message"`
	Key       *string           `json:"key,omitempty"`
	Timestamp int64             `json:"timestamp"`
	Headers   map[string]string `json:"headers,omitempty"`
	Encoding  string            `json:"encoding,omitempty"`
}
