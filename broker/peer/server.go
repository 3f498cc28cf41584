package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/kairolog/kairolog/broker/api"
)

// MaxRequestBytes bounds a peer request's body (a describe's partition
// list for thousands of partitions fits many times over).
const MaxRequestBytes = 64 << 20

// Mux serves the peer operations. It refuses every request without the
// cluster secret before looking at it further.
type Mux struct {
	secret Secret
	log    *slog.Logger
	mux    *http.ServeMux
	// served counts the authenticated requests per operation name; the
	// map is filled as operations are registered, before serving.
	served map[string]*atomic.Int64
}

// NewMux is a Mux that admits callers holding secret.
func NewMux(secret Secret, log *slog.Logger) *Mux {
	if log == nil {
		log = slog.Default()
	}
	return &Mux{secret: secret, log: log, mux: http.NewServeMux(), served: map[string]*atomic.Int64{}}
}

// Served returns how many authenticated requests each operation has
// received, by operation name.
func (m *Mux) Served() map[string]int64 {
	out := make(map[string]int64, len(m.served))
	for name, n := range m.served {
		out[name] = n.Load()
	}
	return out
}

// Handle serves op with h. An error h returns is answered with its code:
// an *api.Error as it is, anything else as 500 INTERNAL (a bug), so
// handlers map their package's errors to api codes first.
func Handle[Req, Resp any](m *Mux, op Op[Req, Resp], h func(ctx context.Context, req Req) (Resp, error)) {
	served := new(atomic.Int64)
	m.served[op.name] = served
	m.mux.HandleFunc(op.path(), func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, api.Errorf(api.CodeMethodNotAllowed, "peer operations are POST, not %s", r.Method))
			return
		}
		var req Req
		enc := encodingOf(r.Header.Get("Content-Type"))
		body, err := requestBody(w, r)
		if err == nil {
			err = decodeMessage(body, enc, &req)
		}
		if err != nil {
			writeError(w, api.Errorf(api.CodeInvalidJSON, "%s: %v", op.name, err))
			return
		}
		resp, err := h(r.Context(), req)
		if err != nil {
			m.writeHandlerError(w, op.name, err)
			return
		}
		writeResult(w, &resp, enc == encBinary)
	})
}

// PayloadReleaser is a reply whose payload is a buffer to be given back
// once the reply is written (a replica fetch's reads): Handle calls
// ReleasePeerPayload when the payload is no longer read.
type PayloadReleaser interface {
	ReleasePeerPayload()
}

// requestBody is a request's body, up to MaxRequestBytes: a stream
// call's frame as it is, or read from HTTP.
func requestBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if fb, ok := r.Body.(*frameBody); ok && fb.Len() == len(fb.b) && len(fb.b) <= MaxRequestBytes {
		return fb.b, nil
	}
	return readBody(http.MaxBytesReader(w, r.Body, MaxRequestBytes), r.ContentLength, MaxRequestBytes)
}

// ServeHTTP checks the cluster secret, then routes.
func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := authenticate(m.secret, r); err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="kairolog-peers"`)
		writeError(w, err)
		return
	}
	ctx := r.Context()
	if r.Header.Get(HeaderForwarded) != "" {
		ctx = WithForwarded(ctx)
		if e, ok := parseEpoch(r.Header.Get(HeaderLeaderEpoch)); ok {
			ctx = WithLeaderEpoch(ctx, e)
		}
	}
	h, pattern := m.mux.Handler(r)
	if pattern == "" {
		writeError(w, api.Errorf(api.CodeNotFound, "no peer operation %s %s", r.Method, r.URL.Path))
		return
	}
	if ctx != r.Context() {
		r = r.WithContext(ctx)
	}
	h.ServeHTTP(w, r)
}

// authenticate admits a request whose Authorization header is "Bearer "
// and the cluster secret.
func authenticate(secret Secret, r *http.Request) *api.Error {
	h := r.Header.Get(headerAuthorization)
	if h == "" {
		return api.Errorf(api.CodeUnauthenticated, "peer calls need the cluster secret (Authorization: Bearer …)")
	}
	token, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || !secret.matches(token) {
		return api.Errorf(api.CodeUnauthenticated, "wrong cluster secret")
	}
	return nil
}

func (m *Mux) writeHandlerError(w http.ResponseWriter, op string, err error) {
	var ae *api.Error
	if !errors.As(err, &ae) {
		m.log.Error("Peer operation failed with an unmapped error", "op", op, "error", err)
		ae = api.Errorf(api.CodeInternal, "%s: %v", op, err)
	}
	writeError(w, ae)
}

func writeError(w http.ResponseWriter, e *api.Error) {
	status := e.Status
	if status == 0 {
		status = api.StatusForCode(e.Code)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(e.Body())
}

// writeResult writes a reply: in its binary encoding when binaryOK (the
// call came in binary) and it has one, otherwise JSON, or a frame when it
// carries a Payload.
func writeResult(w http.ResponseWriter, resp any, binaryOK bool) {
	release := func() {}
	if r, ok := resp.(PayloadReleaser); ok {
		release = r.ReleasePeerPayload
	}
	out, err := encodeMessage(resp, binaryOK)
	if err != nil {
		release()
		writeError(w, api.Errorf(api.CodeInternal, "encode reply: %v", err))
		return
	}
	w.Header().Set("Content-Type", out.enc.contentType())
	w.Header().Set("Content-Length", strconv.Itoa(out.len()))
	if r, ok := w.(*replyRecorder); ok {
		r.take(out) // a stream's reply: written as it is, not copied again
		r.sent = release
		return
	}
	_, _ = w.Write(out.head)
	_, _ = w.Write(out.tail) // a Write keeps no part of what it is given
	release()
}

// frameError is a malformed frame from a peer, request or reply.
func frameError(format string, args ...any) error {
	return fmt.Errorf("peer frame: "+format, args...)
}
