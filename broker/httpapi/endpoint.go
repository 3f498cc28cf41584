package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
)

// Most routes have one shape: read the request (path, query, JSON body)
// into the core's request and check it, call the core, write the reply.
// endpoint is that shape, once; a route names its three parts.

// endpoint serves a route: read builds the core's request from the HTTP
// request (an *api.Error for bad input), authorize checks that the
// principal may make it, call runs it, reply turns the request and its
// result into the status and the JSON body.
func endpoint[Req, Resp any](s *Server, read func(*Server, *http.Request) (Req, error),
	call func(context.Context, Req) (Resp, error), reply func(Req, Resp) (int, any)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, err := read(s, r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := s.authorize(r, req); err != nil {
			s.writeError(w, r, err)
			return
		}
		resp, err := call(r.Context(), req)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		status, body := reply(req, resp)
		writeJSON(w, status, body)
	}
}

// jsonBody is a route's JSON body: it decodes into B (whose pointer
// fields tell a missing field from a zero one) and checks itself into the
// core's request, with the path values of r.
type jsonBody[Req, B any] interface {
	*B
	request(r *http.Request) (Req, error)
}

// pathChecker is a body whose route checks its path first: a path that
// names nothing is answered as such, whatever the body holds.
type pathChecker interface {
	checkPath(r *http.Request) error
}

// fromBody reads a route's JSON body of type B into its request.
func fromBody[Req, B any, PB jsonBody[Req, B]](s *Server, r *http.Request) (Req, error) {
	var body B
	var zero Req
	if pc, ok := any(PB(&body)).(pathChecker); ok {
		if err := pc.checkPath(r); err != nil {
			return zero, err
		}
	}
	if err := s.decodeBody(r, &body); err != nil {
		return zero, err
	}
	return PB(&body).request(r)
}

// noResult is a core call that answers nothing but its error.
func noResult[Req any](call func(context.Context, Req) error) func(context.Context, Req) (struct{}, error) {
	return func(ctx context.Context, req Req) (struct{}, error) { return struct{}{}, call(ctx, req) }
}

// ok answers 200 with v.
func ok[Req, Resp any](v func(Req, Resp) any) func(Req, Resp) (int, any) {
	return func(req Req, resp Resp) (int, any) { return http.StatusOK, v(req, resp) }
}

// result answers 200 with the core's result as it is.
func result[Req, Resp any](_ Req, resp Resp) (int, any) { return http.StatusOK, resp }

// withStatus is v's JSON object with "status" first: the replies of
// changes say what happened, then what it happened to.
type withStatus struct {
	status string
	v      any
}

func (w withStatus) MarshalJSON() ([]byte, error) {
	st, err := json.Marshal(map[string]string{"status": w.status})
	if err != nil || w.v == nil {
		return st, err
	}
	rest, err := json.Marshal(w.v)
	if err != nil {
		return nil, err
	}
	rest = bytes.TrimPrefix(rest, []byte("{"))
	if bytes.Equal(rest, []byte("}")) {
		return st, nil
	}
	return append(append(st[:len(st)-1], ','), rest...), nil
}
