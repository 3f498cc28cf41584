package httpapi

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/buffers"
	"github.com/kairolog/kairolog/broker/core"
	"github.com/kairolog/kairolog/broker/memory"
)

// Bodies are read with three bounds, so that neither large nor slow
// requests can take the broker's memory:
//
//   - a deadline: the whole body must arrive within Options.BodyTimeout of
//     the request's start, or the request is answered 408 and its
//     connection closed (a client that sends its headers and then a byte a
//     minute holds nothing for long);
//   - a size: Options.MaxBodyBytes (413 BODY_TOO_LARGE, without reading
//     a body whose Content-Length says so);
//   - the broker's request memory (memory.Budget.Requests): the buffer
//     grows as bytes arrive, never from what Content-Length announces, and
//     each growth is charged to the request's account first; when the
//     budget is in use the request is answered 503 BROKER_BUSY (at once,
//     before any byte is read, when the announced length does not fit).

// firstBodyBuffer is the buffer a body is first read into.
const firstBodyBuffer = 4 << 10

// withAccount gives the request its memory account, released by the
// returned function once the handler is done.
func withAccount(r *http.Request) (*http.Request, func()) {
	small := r.ContentLength >= 0 && r.ContentLength <= memory.SmallRequestBytes
	acct := memory.NewAccount(small)
	return r.WithContext(memory.WithAccount(r.Context(), acct)), acct.Release
}

// limitBody puts a deadline on reading the body of any request, routed or
// not: net/http itself reads what a handler leaves of a body before it
// reuses the connection, and a client that sends a byte a minute must not
// hold it for that either.
func (s *Server) limitBody(rec *statusRecorder, r *http.Request, start time.Time) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	deadline := start.Add(s.opts.BodyTimeout)
	rc := http.NewResponseController(rec)
	if err := rc.SetReadDeadline(deadline); err == nil {
		rec.bodyDeadline = deadline
		r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc, rec: rec}
	}
}

// deadlineBody lifts the body's read deadline once the body has been read
// to its end: the connection stays open for the reply (a long poll, an
// acks=all produce) and for the requests after it.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	rec  *statusRecorder
	once sync.Once
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(func() {
			_ = b.rc.SetReadDeadline(time.Time{})
			b.rec.bodyDeadline = time.Time{}
		})
	}
	return n, err
}

// readBody checks the content type and reads the body (see above).
func (s *Server) readBody(r *http.Request) ([]byte, *api.Error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !jsonContentType(ct) {
		return nil, api.Errorf(api.CodeUnsupportedMediaType, "content type %q is not JSON; send application/json", ct)
	}
	if r.ContentLength > s.opts.MaxBodyBytes {
		return nil, api.Errorf(api.CodeBodyTooLarge, "request body is larger than %d bytes", s.opts.MaxBodyBytes)
	}
	acct := memory.AccountFrom(r.Context())
	pool := s.b.Memory().Requests
	if r.ContentLength > 0 && !pool.Admit(r.ContentLength, r.ContentLength <= memory.SmallRequestBytes) {
		e, _ := core.AsAPIError(pool.Exhausted(r.ContentLength))
		return nil, e
	}
	// The buffer doubles as bytes arrive, up to the announced length when
	// there is one (the old and the new buffer are charged during a copy).
	limit := s.opts.MaxBodyBytes + 1 // one more, so an overlong body is seen
	if r.ContentLength > 0 {
		limit = r.ContentLength + 1 // one more, to see a body longer than announced
	}
	// A body that says it ends in a kept size grows through kept buffers
	// (bodies); any other (a large one, one without a length) through
	// buffers of its own, as no other body would reuse them. Either is
	// charged at its size before it is taken.
	b := bodyBuffers{kept: r.ContentLength > 0 && buffers.Kept(int(limit))}
	var buf []byte
	for {
		room := int(min(int64(cap(buf)), limit))
		if len(buf) == room {
			if int64(len(buf)) >= limit {
				b.put(buf)
				return nil, api.Errorf(api.CodeBodyTooLarge, "request body is larger than %d bytes", s.opts.MaxBodyBytes)
			}
			want := int(min(int64(max(2*len(buf), firstBodyBuffer)), limit))
			if err := acct.Charge(pool, int64(b.size(want))); err != nil {
				b.put(buf)
				e, _ := core.AsAPIError(err)
				return nil, e
			}
			next := append(b.get(want), buf...)
			acct.Return(pool, int64(cap(buf)))
			b.put(buf)
			buf = next
			room = int(min(int64(cap(buf)), limit))
		}
		n, err := r.Body.Read(buf[len(buf):room])
		buf = buf[:len(buf)+n]
		var failed *api.Error
		switch {
		case err == io.EOF:
			if r.ContentLength > 0 && int64(len(buf)) != r.ContentLength {
				failed = api.Errorf(api.CodeInvalidJSON, "reading request body: %d bytes where Content-Length announced %d", len(buf), r.ContentLength)
				break
			}
			return buf, nil
		case err != nil:
			failed = bodyError(err)
		case r.ContentLength > 0 && int64(len(buf)) > r.ContentLength:
			failed = api.Errorf(api.CodeInvalidJSON, "reading request body: body longer than its Content-Length")
		}
		if failed != nil {
			b.put(buf)
			return nil, failed
		}
	}
}

// bodyError words a failure to read a body.
func bodyError(err error) *api.Error {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return api.Errorf(api.CodeBodyTooLarge, "request body is larger than %d bytes", tooBig.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return api.Errorf(api.CodeBodyTimeout, "the request body did not arrive in time")
	}
	return api.Errorf(api.CodeInvalidJSON, "reading request body: %v", err)
}
