package httpapi

import (
	"encoding/base64"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/kairolog/kairolog/broker/api"
)

// maxProduceTimeout bounds timeout_ms of an acks=all produce.
const maxProduceTimeout = 5 * time.Minute

type produceRecordBody struct {
	Partition *int32            `json:"partition"`
	Key       *string           `json:"key"`
	Message   *string           `json:"message"`
	Value     *string           `json:"value"`
	Headers   map[string]string `json:"headers"`
	Timestamp *int64            `json:"timestamp"`
}

type produceBody struct {
	Topic *string `json:"topic"`
	produceRecordBody
	Records   *[]produceRecordBody `json:"records"`
	Acks      acksValue            `json:"acks"`
	TimeoutMs *int64               `json:"timeout_ms"`
	Encoding  *string              `json:"encoding"`
	// An idempotent produce: all three, or none.
	ProducerID    *int64 `json:"producer_id"`
	ProducerEpoch *int64 `json:"producer_epoch"`
	Sequence      *int64 `json:"sequence"`
}

func (s *Server) produce(w http.ResponseWriter, r *http.Request) {
	raw, body, cerr := s.decodeProduce(r)
	if cerr != nil {
		s.writeError(w, r, cerr)
		return
	}
	args, batch, cerr := body.toArgs()
	if cerr != nil {
		s.writeError(w, r, cerr)
		return
	}
	if err := s.authorize(r, args); err != nil {
		s.writeError(w, r, err)
		return
	}
	positions, err := s.b.Produce(r.Context(), args)
	s.countProduced(args.Records, positions)
	if err != nil {
		s.writeError(w, r, s.produceFailure(r, args.Topic, positions, batch, err))
		return
	}
	buf := getBuf()
	*buf = appendProduceResponse((*buf)[:0], args.Topic, positions, batch)
	writeRaw(w, http.StatusOK, *buf)
	putBuf(buf)
	// Every record is stored: the log holds its own copy of each, and no
	// part of the broker still reads the body the records share. A failed
	// produce keeps its body to the collector, as a record given up on may
	// still be on its way (a forward in flight, a group commit).
	releaseBody(raw)
}

// countProduced adds the stored records to the produce metrics.
func (s *Server) countProduced(records []api.ProduceRecord, positions []api.Position) {
	var recs, n int
	for i := range positions {
		if !positions[i].Stored() {
			continue
		}
		rec := &records[i]
		recs++
		n += len(rec.Key) + len(rec.Value)
		for _, h := range rec.Headers {
			n += len(h.Key) + len(h.Value)
		}
	}
	if recs > 0 {
		s.metrics.producedRecs.Add(float64(recs))
		s.metrics.producedBytes.Add(float64(n))
	}
}

// produceFailure is the error reply of a produce that did not store every
// record as asked. Once the records had partitions, it says where each one
// is, so that a client retries only what was not stored: a batch request
// gets "records" (one entry per request record, "offset" for a stored one,
// "error" and "code" for one whose partition failed, both for one stored
// with fewer in-sync replicas than asked for) and "partial" when some
// records were stored and others not; a single-record request gets its
// "partition", and its "offset" when it is stored all the same. The status
// and top-level code are those of the error Produce chose.
func (s *Server) produceFailure(r *http.Request, topic string, positions []api.Position, batch bool, err error) error {
	if positions == nil {
		return err
	}
	e := s.clientError(r, err)
	out := *e
	o := &api.ProduceOutcome{Topic: topic}
	out.Produce = o
	if !batch {
		p := positions[0]
		o.Partition = &p.Partition
		if p.Stored() {
			o.Offset = &p.Offset
		}
		return &out
	}
	o.Records = make([]api.RecordPosition, len(positions))
	stored, missing := false, false
	var lastErr error // the records of one partition share its error
	var last *api.Error
	for i, p := range positions {
		rec := api.RecordPosition{Partition: p.Partition, Offset: -1}
		if p.Stored() {
			rec.Offset = p.Offset
			stored = true
		} else {
			missing = true
		}
		if p.Err != nil {
			if p.Err != lastErr {
				lastErr, last = p.Err, s.clientError(r, p.Err)
			}
			rec.Error, rec.Code = last.Message, last.Code
		}
		o.Records[i] = rec
	}
	o.Partial = stored && missing
	return &out
}

// appendProduceResponse writes the JSON of client.ProduceResponse by hand:
// produce is the hottest request and its reply is tiny.
func appendProduceResponse(b []byte, topic string, positions []api.Position, batch bool) []byte {
	b = append(b, `{"status":"stored","topic":`...)
	b = appendString(b, topic)
	if len(positions) > 0 && positions[0].Duplicate {
		// An idempotent produce sent again: stored by the first send.
		b = append(b, `,"duplicate":true`...)
	}
	if !batch {
		b = append(b, `,"partition":`...)
		b = strconv.AppendInt(b, int64(positions[0].Partition), 10)
		b = append(b, `,"offset":`...)
		b = strconv.AppendInt(b, positions[0].Offset, 10)
		return append(b, '}')
	}
	b = append(b, `,"records":[`...)
	for i, p := range positions {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"partition":`...)
		b = strconv.AppendInt(b, int64(p.Partition), 10)
		b = append(b, `,"offset":`...)
		b = strconv.AppendInt(b, p.Offset, 10)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// maxProduceRecords bounds the records of one produce request, counted
// before they are decoded (as fetch's max_records bounds a reply).
const maxProduceRecords = 100_000

// decodeProduce reads a produce body, counts its records and charges what
// decoding them takes, then decodes it, trying the reflection-free parser
// for the common shapes first.
func (s *Server) decodeProduce(r *http.Request) (raw []byte, body produceBody, cerr *api.Error) {
	raw, cerr = s.readBody(r)
	if cerr != nil {
		return nil, body, cerr
	}
	shape := scanShape(raw)
	if shape.records > maxProduceRecords {
		return nil, body, api.Errorf(api.CodeBodyTooLarge, "the request carries %d records; a produce request carries at most %d", shape.records, maxProduceRecords)
	}
	if cerr := s.chargeDecoding(r, raw, shape); cerr != nil {
		return nil, body, cerr
	}
	if fast, ok := fastProduce(raw, shape); ok {
		return raw, fast, nil
	}
	return raw, body, decodeJSON(raw, &body)
}

// toArgs checks the request's shape and decodes its records. batch reports a
// request that used "records".
func (b *produceBody) toArgs() (args api.ProduceRequest, batch bool, err *api.Error) {
	if b.Topic == nil || strings.TrimSpace(*b.Topic) == "" {
		return args, false, required("topic")
	}
	// Clone: the fast parser's strings share the request body, and the
	// topic name may be kept (the round-robin counters are keyed by it).
	args.Topic = strings.Clone(strings.TrimSpace(*b.Topic))
	args.Acks = api.AcksLeader
	if b.Acks.all {
		args.Acks = api.AcksAll
	}
	if b.TimeoutMs != nil {
		if *b.TimeoutMs < 0 || *b.TimeoutMs > maxProduceTimeout.Milliseconds() {
			return args, false, invalid("timeout_ms must be between 0 and %d, got %d", maxProduceTimeout.Milliseconds(), *b.TimeoutMs)
		}
		args.Timeout = time.Duration(*b.TimeoutMs) * time.Millisecond
	}
	if args.Producer, err = b.producer(); err != nil {
		return args, b.Records != nil, err
	}
	b64 := false
	if b.Encoding != nil {
		switch strings.ToLower(*b.Encoding) {
		case encodingUTF8, "utf-8", "":
		case encodingBase64:
			b64 = true
		default:
			return args, false, invalid("encoding must be %q or %q, got %q", encodingUTF8, encodingBase64, *b.Encoding)
		}
	}
	if b.Records == nil {
		rec, err := b.produceRecordBody.toRecord(-1, nil, b64, false)
		if err != nil {
			return args, false, err
		}
		args.Records = []api.ProduceRecord{rec}
		return args, false, nil
	}
	if b.Key != nil || b.Message != nil || b.Value != nil || b.Headers != nil || b.Timestamp != nil {
		return args, true, invalid("a request with \"records\" takes key, message, value, headers and timestamp inside each record")
	}
	if len(*b.Records) == 0 {
		return args, true, invalid("\"records\" is empty")
	}
	args.Records = make([]api.ProduceRecord, len(*b.Records))
	for i := range *b.Records {
		rec, err := (*b.Records)[i].toRecord(i, b.Partition, b64, true)
		if err != nil {
			return args, true, err
		}
		args.Records[i] = rec
	}
	return args, true, nil
}

// producer reads producer_id, producer_epoch and sequence: all three make
// the produce idempotent (docs/api.md, Idempotent produce).
func (b *produceBody) producer() (*api.ProducerSequence, *api.Error) {
	if b.ProducerID == nil && b.ProducerEpoch == nil && b.Sequence == nil {
		return nil, nil
	}
	for _, f := range []struct {
		name string
		v    *int64
		max  int64
	}{{"producer_id", b.ProducerID, math.MaxInt64}, {"producer_epoch", b.ProducerEpoch, math.MaxInt16}, {"sequence", b.Sequence, math.MaxInt32}} {
		if f.v == nil {
			return nil, api.Errorf(api.CodeMissingField, "field %q is required with producer_id, producer_epoch and sequence", f.name)
		}
		if *f.v < 0 || *f.v > f.max {
			return nil, invalid("%s must be between 0 and %d, got %d", f.name, f.max, *f.v)
		}
	}
	return &api.ProducerSequence{ID: *b.ProducerID, Epoch: int16(*b.ProducerEpoch), Sequence: int32(*b.Sequence)}, nil
}

func recordField(i int) string { return "records[" + int64Text(int64(i)) + "]." }

// toRecord decodes one record; index is its place in "records" (-1 for a
// single-record request), named in error messages, and defPartition is the
// request's partition.
func (p *produceRecordBody) toRecord(index int, defPartition *int32, b64, inBatch bool) (api.ProduceRecord, *api.Error) {
	rec := api.ProduceRecord{Partition: api.AnyPartition}
	prefix := ""
	if index >= 0 && (b64 || !p.wellFormed(defPartition)) {
		prefix = recordField(index) // only built when it may be needed
	}
	part := p.Partition
	if part == nil && inBatch {
		part = defPartition
	}
	if part != nil {
		if *part < 0 {
			return rec, invalid("%spartition must be at least 0, got %d", prefix, *part)
		}
		rec.Partition = *part
	}
	value := p.Message
	if p.Value != nil {
		if p.Message != nil && *p.Message != *p.Value {
			return rec, invalid("%smessage and %svalue differ; send one of them", prefix, prefix)
		}
		value = p.Value
	}
	if value == nil {
		return rec, api.Errorf(api.CodeMissingField, "field %q is required", prefix+"message")
	}
	var err *api.Error
	if rec.Value, err = decodeBytes(prefix+"message", *value, b64); err != nil {
		return rec, err
	}
	if p.Key != nil {
		if rec.Key, err = decodeBytes(prefix+"key", *p.Key, b64); err != nil {
			return rec, err
		}
		if rec.Key == nil {
			rec.Key = []byte{}
		}
	}
	if len(p.Headers) > 0 {
		rec.Headers = make([]api.Header, 0, len(p.Headers))
		for k, v := range p.Headers {
			hv, err := decodeBytes(prefix+"headers."+k, v, b64)
			if err != nil {
				return rec, err
			}
			rec.Headers = append(rec.Headers, api.Header{Key: k, Value: hv})
		}
		sortHeaders(rec.Headers)
	}
	if p.Timestamp != nil {
		if *p.Timestamp < 0 || *p.Timestamp > math.MaxInt64/2 {
			return rec, invalid("%stimestamp must be Unix milliseconds, got %d", prefix, *p.Timestamp)
		}
		rec.Timestamp = *p.Timestamp
	}
	return rec, nil
}

// wellFormed reports a record that cannot fail validation in toRecord when
// it is not base64, so its error prefix need not be built.
func (p *produceRecordBody) wellFormed(defPartition *int32) bool {
	return (p.Partition == nil || *p.Partition >= 0) && (defPartition == nil || *defPartition >= 0) && (p.Message != nil || p.Value != nil) &&
		(p.Message == nil || p.Value == nil || *p.Message == *p.Value) &&
		(p.Timestamp == nil || (*p.Timestamp >= 0 && *p.Timestamp <= math.MaxInt64/2))
}

// decodeBytes is a field's bytes: base64 decoded, or the text itself. Text
// is not copied: its string is the request body's memory (the fast
// parser's) or encoding/json's, neither written again, and the core copies
// a record's bytes into its batch and writes none of them. An empty text
// is an empty value, not a missing one.
func decodeBytes(field, s string, b64 bool) ([]byte, *api.Error) {
	if !b64 {
		if s == "" {
			return []byte{}, nil
		}
		return unsafe.Slice(unsafe.StringData(s), len(s)), nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, invalid("field %q is not valid base64: %v", field, err)
	}
	return b, nil
}

// sortHeaders orders headers by key so a record's bytes do not depend on Go's
// map iteration order.
func sortHeaders(h []api.Header) {
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && h[j].Key < h[j-1].Key; j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}
