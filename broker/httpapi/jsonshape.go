package httpapi

import (
	"bytes"
	"encoding/json"
)

// jsonShape is what decoding a JSON body would build, counted in one pass
// over its bytes without building any of it, so that a body's decoded
// memory can be bounded and charged before it is decoded (a 16 MiB body of
// a million empty records decodes to hundreds of megabytes).
type jsonShape struct {
	// values counts the body's values at every depth, object keys
	// included: each becomes at least one allocation or slot when decoded.
	values int
	// records counts the elements of the top-level "records" arrays
	// (matched as encoding/json matches keys: case-insensitively).
	records int
	// backslash says the body holds a backslash anywhere: without one, no
	// string in it has an escape.
	backslash bool
}

// scanShape counts the shape of a JSON body. For a body that is not valid
// JSON the counts are only an estimate; decoding refuses such a body anyway.
func scanShape(b []byte) jsonShape {
	s := jsonShape{backslash: bytes.IndexByte(b, '\\') >= 0}
	depth := 0
	// recordsDepth is the depth inside a top-level "records" array, 0 when
	// not in one; keyIsRecords says the top-level key just read is it.
	recordsDepth := 0
	keyIsRecords := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch c {
		case ' ', '\t', '\n', '\r', ':', ',':
			continue
		case '}', ']':
			if depth == recordsDepth {
				recordsDepth = 0
			}
			depth--
			continue
		}
		// A value (or, in an object, a key) starts here.
		s.values++
		if depth == recordsDepth && recordsDepth > 0 {
			s.records++
		}
		switch c {
		case '{', '[':
			depth++
			if c == '[' && depth == 2 && keyIsRecords {
				recordsDepth = depth
			}
			keyIsRecords = false
		case '"':
			end := stringEnd(b, i)
			if depth == 1 && isKey(b, i) {
				keyIsRecords = isRecordsKey(b[i : end+1])
			} else if depth == 1 {
				keyIsRecords = false
			}
			i = end
		default:
			// A number or literal: skip to its end.
			for i+1 < len(b) && !endsScalar[b[i+1]] {
				i++
			}
			if depth == 1 {
				keyIsRecords = false
			}
		}
	}
	return s
}

// endsScalar marks the bytes that end a number or literal.
var endsScalar = func() (t [256]bool) {
	for _, c := range []byte(" \t\n\r,:]}") {
		t[c] = true
	}
	return t
}()

// stringEnd returns the index of the quote that closes the string opened
// at b[start], or len(b)-1 when it is not closed.
func stringEnd(b []byte, start int) int {
	// The vectorised bytes.IndexByte finds the next quote; it closes the
	// string unless an odd run of backslashes escapes it. Every byte is
	// looked at about once, however many escapes the string holds: a
	// backslash is counted only in the run just before a quote.
	i := start + 1
	for i < len(b) {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			break
		}
		q += i
		run := 0
		for q-1-run > start && b[q-1-run] == '\\' {
			run++
		}
		if run%2 == 0 {
			return q
		}
		i = q + 1
	}
	return len(b) - 1
}

// isKey reports whether the string at b[start] is an object key: the next
// significant byte after it is a colon.
func isKey(b []byte, start int) bool {
	for i := stringEnd(b, start) + 1; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case ':':
			return true
		}
		return false
	}
	return false
}

// isRecordsKey reports whether a quoted key decodes to a name encoding/json
// matches with "records": case-insensitively, after unescaping.
func isRecordsKey(quoted []byte) bool {
	key := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(key, '\\') >= 0 {
		var unquoted string
		if json.Unmarshal(quoted, &unquoted) != nil {
			return false
		}
		key = []byte(unquoted)
	}
	return bytes.EqualFold(key, []byte("records"))
}
