package httpapi

import (
	"encoding/base64"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/kairolog/kairolog/broker/api"
)

// The fetch reply is written by hand rather than with encoding/json: it is
// the broker's hottest reply, and appending into a pooled buffer is several
// times faster than reflecting over a slice of records. The output is the
// JSON shape of GET /fetch in docs/api.md.

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= 4<<20 {
		bufPool.Put(b)
	}
}

// appendFetchResponse appends the JSON reply for res and returns it with the
// number of key, value and header bytes it carries.
func appendFetchResponse(b []byte, res *api.FetchResult, b64 bool) ([]byte, int) {
	payload := 0
	b = append(b, `{"topic":`...)
	b = appendString(b, res.Topic)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(res.Partition), 10)
	b = append(b, `,"records":[`...)
	for i := range res.Records {
		if i > 0 {
			b = append(b, ',')
		}
		var n int
		b, n = appendRecord(b, &res.Records[i], b64)
		payload += n
	}
	b = append(b, `],"high_watermark":`...)
	b = strconv.AppendInt(b, res.HighWatermark, 10)
	b = append(b, `,"log_start_offset":`...)
	b = strconv.AppendInt(b, res.LogStartOffset, 10)
	b = append(b, `,"next_offset":`...)
	b = strconv.AppendInt(b, res.NextOffset, 10)
	b = append(b, '}')
	return b, payload
}

func appendRecord(b []byte, r *api.Record, b64 bool) ([]byte, int) {
	n := len(r.Key) + len(r.Value)
	if !b64 {
		b64 = !utf8.Valid(r.Value) || (r.Key != nil && !utf8.Valid(r.Key))
		for _, h := range r.Headers {
			n += len(h.Key) + len(h.Value)
			b64 = b64 || !utf8.Valid(h.Value)
		}
	} else {
		for _, h := range r.Headers {
			n += len(h.Key) + len(h.Value)
		}
	}
	b = append(b, `{"offset":`...)
	b = strconv.AppendInt(b, r.Offset, 10)
	b = append(b, `,"message":`...)
	b = appendBytes(b, r.Value, b64)
	if r.Key != nil {
		b = append(b, `,"key":`...)
		b = appendBytes(b, r.Key, b64)
	}
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, r.Timestamp, 10)
	if len(r.Headers) > 0 {
		b = append(b, `,"headers":{`...)
		for i, h := range r.Headers {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, h.Key)
			b = append(b, ':')
			b = appendBytes(b, h.Value, b64)
		}
		b = append(b, '}')
	}
	if b64 {
		b = append(b, `,"encoding":"base64"`...)
	}
	b = append(b, '}')
	return b, n
}

func appendBytes(b, v []byte, b64 bool) []byte {
	if !b64 {
		return appendString(b, v)
	}
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, v)
	return append(b, '"')
}

// needsEscape marks the ASCII bytes a JSON string cannot hold as they are.
var needsEscape = func() (t [256]bool) {
	for i := 0; i < 0x20; i++ {
		t[i] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

const hexDigits = "0123456789abcdef"

// appendString appends s (valid UTF-8, or a header key) as a JSON string.
// U+2028 and U+2029 are escaped as encoding/json does, so the reply is also
// valid JavaScript.
func appendString[T string | []byte](b []byte, s T) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !needsEscape[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+4, len(s))]))
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
