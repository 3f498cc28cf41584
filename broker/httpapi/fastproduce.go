package httpapi

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// fastProduce decodes produce bodies without reflection: one JSON object
// whose values are strings without escapes, integers, booleans or null, plus
// "records" (an array of such objects) and "headers" (an object of such
// strings). It reports ok=false for anything else (escapes, fractions,
// numbers that do not fit, nesting it does not expect, repeated "records" or
// "headers", malformed input), and the caller then decodes with
// encoding/json, which also words the error. For every input it accepts it
// yields what encoding/json would (FuzzFastProduce checks this).
//
// shape is the body's (scanShape): how many records it holds, so that
// their slice is allocated once, and whether it holds a backslash at all,
// without which no string needs looking at for one.
func fastProduce(raw []byte, shape jsonShape) (body produceBody, ok bool) {
	p := fastParser{b: raw, recordCount: shape.records, noBackslash: !shape.backslash}
	p.ws()
	ok = p.object(func(key string) bool { return p.topField(&body, key) })
	return body, ok && p.end()
}

// object parses {"key": value, ...}, calling field for each key with the
// parser on the value.
func (p *fastParser) object(field func(key string) bool) bool {
	if !p.eat('{') {
		return false
	}
	p.ws()
	if p.eat('}') {
		return true
	}
	for {
		p.ws()
		key, ok := p.str()
		if !ok {
			return false
		}
		p.ws()
		if !p.eat(':') {
			return false
		}
		p.ws()
		if !field(key) {
			return false
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		return p.eat('}')
	}
}

type fastParser struct {
	b           []byte
	i           int
	sawRecords  bool
	recordCount int  // the records the body holds, as counted before parsing
	noBackslash bool // the body holds none
	// strs holds the strings the fields point to, so that a request's
	// strings cost an allocation per slab rather than one each.
	strs []string
}

func (p *fastParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *fastParser) end() bool {
	p.ws()
	return p.i == len(p.b)
}

func (p *fastParser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// str reads a string with no escapes and valid UTF-8. The string shares the
// request body's memory: the body is read once into its own buffer and never
// written again, and every consumer of these strings copies what it keeps
// (records into the log's batch, names via strings.Clone where stored).
func (p *fastParser) str() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start, b := p.i, p.b
	q := bytes.IndexByte(b[start:], '"')
	if q < 0 {
		return "", false
	}
	i := start + q
	if !p.noBackslash && bytes.IndexByte(b[start:i], '\\') >= 0 || !plainText(b[start:i]) {
		return "", false
	}
	p.i = i + 1
	if i == start {
		return "", true
	}
	return unsafe.String(&b[start], i-start), true
}

// integer reads a JSON integer (no fraction or exponent).
func (p *fastParser) integer(bits int) (int64, bool) {
	start := p.i
	p.eat('-')
	digits := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	if p.i == digits || (p.b[digits] == '0' && p.i-digits > 1) {
		return 0, false
	}
	if c := p.peek(); c == '.' || c == 'e' || c == 'E' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(p.b[start:p.i]), 10, bits)
	return n, err == nil
}

func (p *fastParser) literal(lit string) bool {
	if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
		p.i += len(lit)
		return true
	}
	return false
}

// foldKey lowercases an ASCII key, as encoding/json matches keys
// case-insensitively; a non-ASCII key (which encoding/json folds with
// Unicode rules) goes to the slow path.
func foldKey(key string) (string, bool) {
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			return "", false
		}
	}
	return strings.ToLower(key), true
}

// topField reads one field of the request object.
func (p *fastParser) topField(body *produceBody, key string) bool {
	key, ok := foldKey(key)
	if !ok {
		return false
	}
	switch key {
	case "topic":
		return p.strField(&body.Topic)
	case "encoding":
		return p.strField(&body.Encoding)
	case "timeout_ms":
		return p.intField(&body.TimeoutMs)
	case "producer_id":
		return p.intField(&body.ProducerID)
	case "producer_epoch":
		return p.intField(&body.ProducerEpoch)
	case "sequence":
		return p.intField(&body.Sequence)
	case "acks":
		if p.literal("null") {
			return false
		}
		start := p.i
		if p.peek() == '"' {
			if _, ok := p.str(); !ok {
				return false
			}
		} else if _, ok := p.integer(64); !ok {
			return false
		}
		return body.Acks.UnmarshalJSON(p.b[start:p.i]) == nil
	case "records":
		if body.Records != nil || p.sawRecords {
			return false // encoding/json would merge into the first array
		}
		p.sawRecords = true
		if p.literal("null") {
			return true
		}
		return p.records(body)
	}
	return p.recordField(&body.produceRecordBody, key)
}

func (p *fastParser) records(body *produceBody) bool {
	if !p.eat('[') {
		return false
	}
	recs := make([]produceRecordBody, 0, p.recordCount)
	p.ws()
	if !p.eat(']') {
		for {
			p.ws()
			var r produceRecordBody
			if !p.object(func(key string) bool {
				k, ok := foldKey(key)
				return ok && p.recordField(&r, k)
			}) {
				return false
			}
			recs = append(recs, r)
			p.ws()
			if p.eat(',') {
				continue
			}
			if !p.eat(']') {
				return false
			}
			break
		}
	}
	body.Records = &recs
	return true
}

// recordField reads one field of a record (folded key).
func (p *fastParser) recordField(r *produceRecordBody, key string) bool {
	switch key {
	case "partition":
		if p.literal("null") {
			r.Partition = nil
			return true
		}
		n, ok := p.integer(32)
		v := int32(n)
		r.Partition = &v
		return ok
	case "key":
		return p.strField(&r.Key)
	case "message":
		return p.strField(&r.Message)
	case "value":
		return p.strField(&r.Value)
	case "timestamp":
		return p.intField(&r.Timestamp)
	case "headers":
		if r.Headers != nil || p.literal("null") {
			return false // a repeat would merge; null clears (rare)
		}
		h := map[string]string{}
		if !p.object(func(key string) bool {
			v, ok := p.str()
			h[key] = v
			return ok
		}) {
			return false
		}
		r.Headers = h
		return true
	}
	return p.skipScalar()
}

func (p *fastParser) strField(dst **string) bool {
	if p.literal("null") {
		*dst = nil
		return true
	}
	s, ok := p.str()
	*dst = p.newString(s)
	return ok
}

// newString returns a pointer to s kept in the parser's slab. A full slab
// is left to the pointers into it and a new one begun.
func (p *fastParser) newString(s string) *string {
	if len(p.strs) == cap(p.strs) {
		p.strs = make([]string, 0, max(p.recordCount, 8))
	}
	p.strs = append(p.strs, s)
	return &p.strs[len(p.strs)-1]
}

func (p *fastParser) intField(dst **int64) bool {
	if p.literal("null") {
		*dst = nil
		return true
	}
	n, ok := p.integer(64)
	*dst = &n
	return ok
}

// skipScalar skips the value of an unknown field if it is a scalar.
func (p *fastParser) skipScalar() bool {
	switch c := p.peek(); {
	case c == '"':
		_, ok := p.str()
		return ok
	case c == '-' || (c >= '0' && c <= '9'):
		_, ok := p.integer(64)
		return ok
	case p.literal("true"), p.literal("false"):
		return true
	}
	return false
}

// plainText reports whether s, the bytes of a string without a
// backslash, can be taken as they are: no control character, valid UTF-8.
// A value is most of a record's bytes, so control characters and
// non-ASCII bytes are looked for 32 bytes at a time, without a branch per
// word (below, gathered over the words, tells whether any byte is below
// 0x20); UTF-8 is validated only when there are non-ASCII bytes.
func plainText(s []byte) bool {
	all := s
	var ctl, high uint64
	for len(s) >= 32 {
		a, b := binary.LittleEndian.Uint64(s), binary.LittleEndian.Uint64(s[8:])
		c, d := binary.LittleEndian.Uint64(s[16:]), binary.LittleEndian.Uint64(s[24:])
		ctl |= below(a, 0x20) | below(b, 0x20) | below(c, 0x20) | below(d, 0x20)
		high |= a | b | c | d
		s = s[32:]
	}
	for len(s) >= 8 {
		a := binary.LittleEndian.Uint64(s)
		ctl |= below(a, 0x20)
		high |= a
		s = s[8:]
	}
	for _, c := range s {
		if c < 0x20 {
			return false
		}
		high |= uint64(c)
	}
	return ctl&highBits == 0 && (high&highBits == 0 || utf8.Valid(all))
}

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// below has a byte's top bit set, masked with highBits, when that byte of
// x is below n (n at most 128), and only when some byte is: the
// subtraction borrows into a byte's top bit only below n, and a byte whose
// own top bit is set is masked out. Gathered over words with |, it is
// masked once.
func below(x uint64, n byte) uint64 { return (x - lowBits*uint64(n)) & ^x }
