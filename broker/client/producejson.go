package client

import (
	"encoding/binary"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kairolog/kairolog/broker/api"
)

// The produce request and its reply without reflection. A batched produce
// of 1000 records spent about 0.5 µs per record in json.Marshal and 1.8 µs
// per record in json.Unmarshal of the reply's positions (RecordPosition's
// UnmarshalJSON decodes each one again), more than the broker spends on
// the record. appendJSON writes exactly the bytes json.Marshal writes
// (TestProduceRequestJSONMatchesMarshal, FuzzProduceRequestJSON);
// decodeJSON reads the reply a broker writes on success and hands anything
// else to json.Unmarshal (FuzzProduceResponseJSON).

// appendJSON appends req as json.Marshal encodes it.
func (req *ProduceRequest) appendJSON(b []byte) []byte {
	b = append(b, `{"topic":`...)
	b = appendJSONString(b, req.Topic)
	b = appendRecordFields(b, req.Partition, req.Key, false, req.Message, req.Headers, req.Timestamp)
	if len(req.Records) > 0 {
		b = append(b, `,"records":[`...)
		for i := range req.Records {
			r := &req.Records[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			b = appendRecordFields(b, r.Partition, r.Key, true, r.Value, r.Headers, r.Timestamp)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if req.Acks != "" {
		b = append(b, `,"acks":`...)
		b = appendJSONString(b, req.Acks)
	}
	if req.TimeoutMs != 0 {
		b = append(b, `,"timeout_ms":`...)
		b = strconv.AppendInt(b, req.TimeoutMs, 10)
	}
	if req.Encoding != "" {
		b = append(b, `,"encoding":`...)
		b = appendJSONString(b, req.Encoding)
	}
	if req.ProducerID != nil {
		b = append(b, `,"producer_id":`...)
		b = strconv.AppendInt(b, *req.ProducerID, 10)
	}
	if req.ProducerEpoch != nil {
		b = append(b, `,"producer_epoch":`...)
		b = strconv.AppendInt(b, int64(*req.ProducerEpoch), 10)
	}
	if req.Sequence != nil {
		b = append(b, `,"sequence":`...)
		b = strconv.AppendInt(b, int64(*req.Sequence), 10)
	}
	return append(b, '}')
}

// jsonSize is about the length of req's JSON: its strings plus room for
// the field names of each record (a string that needs escaping only makes
// the buffer grow once more).
func (req *ProduceRequest) jsonSize() int {
	n := 128 + len(req.Topic) + len(req.Message) + headersSize(req.Headers)
	if req.Key != nil {
		n += len(*req.Key)
	}
	for i := range req.Records {
		r := &req.Records[i]
		n += 48 + len(r.Value) + headersSize(r.Headers)
		if r.Key != nil {
			n += len(*r.Key)
		}
	}
	return n
}

func headersSize(h map[string]string) int {
	n := 0
	for k, v := range h {
		n += len(k) + len(v) + 6
	}
	return n
}

// appendRecordFields appends the fields a record and a single-record
// request share, in their struct order. In a record the first field written
// has no leading comma and "value" is always written; in a request every
// field follows "topic", and "message" is omitted when empty.
func appendRecordFields(b []byte, partition *int32, key *string, inRecord bool, value string, headers map[string]string, ts int64) []byte {
	sep := func(b []byte) []byte {
		if inRecord && b[len(b)-1] == '{' {
			return b
		}
		return append(b, ',')
	}
	if partition != nil {
		b = append(sep(b), `"partition":`...)
		b = strconv.AppendInt(b, int64(*partition), 10)
	}
	if key != nil {
		b = append(sep(b), `"key":`...)
		b = appendJSONString(b, *key)
	}
	if inRecord {
		b = append(sep(b), `"value":`...)
		b = appendJSONString(b, value)
	} else if value != "" {
		b = append(b, `,"message":`...)
		b = appendJSONString(b, value)
	}
	if len(headers) > 0 {
		b = append(b, `,"headers":{`...)
		for i, k := range slices.Sorted(maps.Keys(headers)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, headers[k])
		}
		b = append(b, '}')
	}
	if ts != 0 {
		b = append(b, `,"timestamp":`...)
		b = strconv.AppendInt(b, ts, 10)
	}
	return b
}

// appendJSONString appends s quoted. Printable ASCII that json.Marshal
// does not escape is copied; any other string is left to json.Marshal,
// whose escaping (HTML characters, invalid UTF-8, U+2028) it then matches.
func appendJSONString(b []byte, s string) []byte {
	if needsEscape(s) {
		q, _ := json.Marshal(s) // a string always encodes
		return append(b, q...)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// needsEscape reports whether s holds a byte json.Marshal does not copy as
// it is: a control character, DEL or beyond ASCII, a quote, a backslash,
// or one of the HTML characters <, > and &. A value is most of a record's
// bytes, so the range is checked eight bytes at a time and each character
// with the vectorised strings.IndexByte (faster here than checking all
// eight in the same pass).
func needsEscape(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
		if lessThan(x, 0x20)|x&highBits|lessThan(x^(lowBits*0x7f), 1) != 0 {
			return true
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return true
		}
	}
	for _, c := range []byte{'"', '\\', '<', '>', '&'} {
		if strings.IndexByte(s, c) >= 0 {
			return true
		}
	}
	return false
}

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// lessThan is non-zero when a byte of x is below n (n at most 128): the
// subtraction borrows into a byte's top bit only below n, and a byte whose
// own top bit is set is masked out. x^(lowBits*c) has a zero byte, below
// 1, where x holds c.
func lessThan(x uint64, n byte) uint64 { return (x - lowBits*uint64(n)) & ^x & highBits }

// decodeJSON reads a produce reply: the shape a broker writes when every
// record was stored without reflection, anything else with json.Unmarshal.
func (r *ProduceResponse) decodeJSON(raw []byte) error {
	if fastProduceResponse(raw, r) {
		return nil
	}
	*r = ProduceResponse{}
	return json.Unmarshal(raw, r)
}

// fastProduceResponse reads exactly
//
//	{"status":S,"topic":T[,"duplicate":true](,"partition":N,"offset":N|,"records":[{"partition":N,"offset":N},...])}
//
// with S and T strings without escapes and N integers, as the broker
// writes a successful reply, and reports false for anything else.
func fastProduceResponse(raw []byte, out *ProduceResponse) bool {
	p := replyParser{b: raw}
	var r ProduceResponse
	var ok bool
	if !p.lit(`{"status":`) {
		return false
	}
	if r.Status, ok = p.str(); !ok || !p.lit(`,"topic":`) {
		return false
	}
	if r.Topic, ok = p.str(); !ok {
		return false
	}
	if p.lit(`,"duplicate":true`) {
		r.Duplicate = true
	}
	switch {
	case p.lit(`,"partition":`):
		part, ok := p.int(32)
		if !ok || !p.lit(`,"offset":`) {
			return false
		}
		off, ok := p.int(64)
		if !ok {
			return false
		}
		part32 := int32(part)
		r.Partition, r.Offset = &part32, &off
	case p.lit(`,"records":[`):
		r.Records = make([]api.RecordPosition, 0, len(raw)/28) // {"partition":N,"offset":N}, at least
		for {
			if !p.lit(`{"partition":`) {
				return false
			}
			part, ok := p.int(32)
			if !ok || !p.lit(`,"offset":`) {
				return false
			}
			off, ok := p.int(64)
			if !ok || !p.lit(`}`) {
				return false
			}
			r.Records = append(r.Records, api.RecordPosition{Partition: int32(part), Offset: off})
			if p.lit(`]`) {
				break
			}
			if !p.lit(`,`) {
				return false
			}
		}
	default:
		return false
	}
	if !p.lit(`}`) || !p.done() {
		return false
	}
	*out = r
	return true
}

// replyParser reads a produce reply left to right.
type replyParser struct {
	b []byte
	i int
}

// lit consumes s if the input continues with it.
func (p *replyParser) lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// str reads a string of printable ASCII without escapes.
func (p *replyParser) str() (string, bool) {
	if !p.lit(`"`) {
		return "", false
	}
	start := p.i
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			s := string(p.b[start:p.i])
			p.i++
			return s, true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return "", false
		}
	}
	return "", false
}

// int reads a JSON integer that fits in bits: an optional minus, then 0 or
// digits without a leading zero. Up to 18 digits cannot overflow an int64
// and are summed as they are read; longer ones go to strconv.
func (p *replyParser) int(bits int) (int64, bool) {
	start := p.i
	neg := p.i < len(p.b) && p.b[p.i] == '-'
	if neg {
		p.i++
	}
	digits := p.i
	var n int64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		n = n*10 + int64(p.b[p.i]-'0')
		p.i++
	}
	switch {
	case p.i == digits || (p.b[digits] == '0' && p.i-digits > 1):
		return 0, false
	case p.i-digits > 18:
		n, err := strconv.ParseInt(string(p.b[start:p.i]), 10, bits)
		return n, err == nil
	}
	if neg {
		n = -n
	}
	limit := int64(1)<<(bits-1) - 1
	return n, n <= limit && n >= -limit-1
}

// done reports the end of the input, after JSON whitespace (the broker ends
// its reply with a newline).
func (p *replyParser) done() bool {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
	return p.i == len(p.b)
}
