package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/core"
)

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only a bug can make a reply unencodable.
		panic(err)
	}
	writeRaw(w, status, b)
}

// jsonContentType is shared by every reply: net/http only reads it.
var jsonContentTypeHeader = []string{"application/json"}

// smallReplyBytes is the size up to which net/http buffers a whole reply
// and sets its Content-Length itself (its chunking threshold). Setting the
// header ourselves for these replies, the most common ones, would cost an
// allocation and a larger header map to copy on every request.
const smallReplyBytes = 2048

func writeRaw(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	// Direct map writes skip Header.Set's key canonicalisation; the keys
	// are already canonical.
	h["Content-Type"] = jsonContentTypeHeader
	if len(b)+1 > smallReplyBytes {
		h["Content-Length"] = []string{strconv.Itoa(len(b) + 1)}
	}
	w.WriteHeader(status)
	b = append(b, '\n')
	_, _ = w.Write(b)
}

// writeError answers err with the code the broker gives it
// (core.AsAPIError); an error it has no code for is a bug, logged and
// answered with 500 INTERNAL.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := s.clientError(r, err)
	status := e.Status
	if status == 0 {
		status = api.StatusForCode(e.Code)
	}
	if e.RetryAfterMs > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt((e.RetryAfterMs+999)/1000, 10))
	}
	if rec, ok := w.(*statusRecorder); ok {
		rec.code = e.Code
	}
	writeJSON(w, status, e.Body())
}

// clientError is the *api.Error err is answered with: the code the
// broker gives it (core.AsAPIError), and for an error it has no code
// for (only a bug) an INTERNAL error, logged with its cause.
func (s *Server) clientError(r *http.Request, err error) *api.Error {
	e, ok := core.AsAPIError(err)
	if !ok {
		s.log.Error("Request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		e = api.Errorf(api.CodeInternal, "internal error: %v", err)
	}
	return e
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, code, format string, args ...any) {
	s.writeError(w, r, api.Errorf(code, format, args...))
}
