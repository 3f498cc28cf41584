package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/core"
	"github.com/kairolog/kairolog/broker/memory"
)

// decodeBody reads the JSON body of r into v. Unknown fields are ignored, so
// newer clients work with older brokers; a value of the wrong type, a body
// that is not one JSON object, an empty body and a non-JSON content type are
// refused with a 4xx naming the problem.
func (s *Server) decodeBody(r *http.Request, v any) *api.Error {
	raw, cerr := s.readBody(r)
	if cerr != nil {
		return cerr
	}
	if cerr := s.chargeDecoding(r, raw, scanShape(raw)); cerr != nil {
		return cerr
	}
	return decodeJSON(raw, v)
}

// decodedValueBytes is what one JSON value of a body takes once decoded,
// and what the broker builds from it: 70–150 bytes measured for produce
// records, header maps and config maps, slice growth included.
const decodedValueBytes = 128

// chargeDecoding charges the request's account, before a body is decoded,
// with what decoding it will build: its values, and copies of its bytes. A
// body that would take more than half of the request budget is refused as
// too large, since it could never be served; otherwise a budget in use by
// other requests is 503 BROKER_BUSY.
func (s *Server) chargeDecoding(r *http.Request, raw []byte, shape jsonShape) *api.Error {
	n := int64(shape.values)*decodedValueBytes + int64(len(raw))
	pool := s.b.Memory().Requests
	if n > pool.Size()/2 {
		return api.Errorf(api.CodeBodyTooLarge, "the request body holds %d JSON values, which would take %d bytes to decode; at most %d may be (half of queued.max.request.bytes)",
			shape.values, n, pool.Size()/2)
	}
	if err := memory.AccountFrom(r.Context()).Charge(pool, n); err != nil {
		e, _ := core.AsAPIError(err)
		return e
	}
	return nil
}

func decodeJSON(raw []byte, v any) *api.Error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return api.Errorf(api.CodeInvalidJSON, "request body is empty; expected a JSON object")
	}
	if t := firstByte(raw); t != '{' {
		return api.Errorf(api.CodeInvalidJSON, "request body must be a JSON object")
	}
	// Unmarshal also refuses data after the object, as a syntax error.
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonError(err)
	}
	return nil
}

func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

func jsonError(err error) *api.Error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	var fieldErr *fieldError
	switch {
	case errors.As(err, &fieldErr):
		return api.Errorf(api.CodeInvalidJSON, "field %q: %s", fieldErr.field, fieldErr.msg)
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "(body)"
		}
		return api.Errorf(api.CodeInvalidJSON, "field %q: expected %s, got JSON %s", field, typeName(typeErr), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return api.Errorf(api.CodeInvalidJSON, "malformed JSON at byte %d: %v", syntaxErr.Offset, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return api.Errorf(api.CodeInvalidJSON, "malformed JSON: unexpected end of body")
	}
	return api.Errorf(api.CodeInvalidJSON, "malformed JSON: %v", err)
}

func typeName(e *json.UnmarshalTypeError) string {
	if e.Type == nil {
		return "another type"
	}
	switch k := e.Type.Kind().String(); k {
	case "int8", "int16", "int32", "int64", "int", "uint8", "uint16", "uint32", "uint64", "uint":
		return "an integer that fits " + k
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	default:
		return k
	}
}

// fieldError is returned by custom unmarshalers so the reply names the field.
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

func jsonContentType(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	switch {
	case mt == "application/json", strings.HasSuffix(mt, "+json"),
		// curl -d sends form-urlencoded; PowerShell and some tools send text.
		mt == "application/x-www-form-urlencoded", mt == "text/plain":
		return true
	}
	return false
}

// query reads URL query parameters, remembering the first problem so a
// handler can parse everything and check once.
type query struct {
	r   *http.Request
	err *api.Error
}

func newQuery(r *http.Request) *query { return &query{r: r} }

func (q *query) setErr(e *api.Error) {
	if q.err == nil {
		q.err = e
	}
}

// error is the first problem, or nil.
func (q *query) error() error {
	if q.err == nil {
		return nil
	}
	return q.err
}

// str returns a required (trimmed, non-empty) parameter.
func (q *query) str(name string) string {
	v := strings.TrimSpace(q.r.URL.Query().Get(name))
	if v == "" {
		q.setErr(api.Errorf(api.CodeMissingField, "query parameter %q is required", name))
	}
	return v
}

// opt returns an optional parameter and whether it was present.
func (q *query) opt(name string) (string, bool) {
	vals, ok := q.r.URL.Query()[name]
	if !ok || len(vals) == 0 {
		return "", false
	}
	return strings.TrimSpace(vals[0]), true
}

// int parses an integer parameter within [lo, hi]; def when absent, and
// required when def is nil.
func (q *query) int(name string, lo, hi int64, def *int64) int64 {
	v, ok := q.opt(name)
	if !ok || v == "" {
		if def == nil {
			q.setErr(api.Errorf(api.CodeMissingField, "query parameter %q is required", name))
			return 0
		}
		return *def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		q.setErr(api.Errorf(api.CodeInvalidArgument, "query parameter %q must be an integer, got %q", name, v))
		return 0
	}
	if n < lo || n > hi {
		q.setErr(api.Errorf(api.CodeInvalidArgument, "query parameter %q must be between %d and %d, got %d", name, lo, hi, n))
		return 0
	}
	return n
}

func ptr[T any](v T) *T { return &v }

// required reports a missing or blank JSON field.
func required(field string) *api.Error {
	return api.Errorf(api.CodeMissingField, "field %q is required", field)
}

func invalid(format string, args ...any) *api.Error {
	return api.Errorf(api.CodeInvalidArgument, format, args...)
}
