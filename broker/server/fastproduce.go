package server

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// fastProduce decodes the common single-record produce body — one flat JSON
// object whose values are strings without escapes, integers, booleans or
// null — without reflection. It reports ok=false for anything else (nested
// values, escapes, fractions, numbers that do not fit, malformed input), and
// the caller then decodes with encoding/json, which also words the error.
// For every input it accepts, it yields what encoding/json would
// (FuzzFastProduce checks this).
func fastProduce(raw []byte) (body produceBody, ok bool) {
	p := fastParser{b: raw}
	p.ws()
	if !p.eat('{') {
		return body, false
	}
	p.ws()
	if p.eat('}') {
		return body, p.end()
	}
	for {
		p.ws()
		key, ok := p.str()
		if !ok {
			return body, false
		}
		p.ws()
		if !p.eat(':') {
			return body, false
		}
		p.ws()
		if !p.field(&body, key) {
			return body, false
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			return body, p.end()
		}
		return body, false
	}
}

type fastParser struct {
	b []byte
	i int
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

// str reads a string with no escapes and valid UTF-8.
func (p *fastParser) str() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start, ascii := p.i, true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if !ascii && !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		p.i++
	}
	return "", false
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

// field reads the value of key into body. Keys match case-insensitively,
// as encoding/json matches them; a non-ASCII key (which encoding/json folds
// with Unicode rules) goes to the slow path.
func (p *fastParser) field(body *produceBody, key string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			return false
		}
	}
	key = strings.ToLower(key)
	if p.literal("null") {
		// encoding/json leaves a field unchanged for null, except that a
		// pointer is set to nil.
		switch key {
		case "topic":
			body.Topic = nil
		case "partition":
			body.Partition = nil
		case "key":
			body.Key = nil
		case "message":
			body.Message = nil
		case "value":
			body.Value = nil
		case "timestamp":
			body.Timestamp = nil
		case "timeout_ms":
			body.TimeoutMs = nil
		case "encoding":
			body.Encoding = nil
		case "headers", "records", "acks":
			return false
		}
		return true
	}
	strField := func(dst **string) bool {
		s, ok := p.str()
		*dst = &s
		return ok
	}
	switch key {
	case "topic":
		return strField(&body.Topic)
	case "key":
		return strField(&body.Key)
	case "message":
		return strField(&body.Message)
	case "value":
		return strField(&body.Value)
	case "encoding":
		return strField(&body.Encoding)
	case "partition":
		n, ok := p.integer(32)
		v := int32(n)
		body.Partition = &v
		return ok
	case "timestamp":
		n, ok := p.integer(64)
		body.Timestamp = &n
		return ok
	case "timeout_ms":
		n, ok := p.integer(64)
		body.TimeoutMs = &n
		return ok
	case "acks":
		start := p.i
		if p.peek() == '"' {
			if _, ok := p.str(); !ok {
				return false
			}
		} else if _, ok := p.integer(64); !ok {
			return false
		}
		return body.Acks.UnmarshalJSON(p.b[start:p.i]) == nil
	case "headers", "records":
		return false
	}
	return p.skipScalar()
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
