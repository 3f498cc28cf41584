package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// InternalPrefix is the path under which Handler serves the
// broker-to-controller requests.
const InternalPrefix = "/internal/controller/"

// forwardedHeader marks a request a broker already forwarded, so the
// receiver answers NOT_CONTROLLER instead of forwarding it again.
const forwardedHeader = "X-Kairolog-Forwarded"

// retryWindow bounds how long a call waits for a controller when its
// context has no deadline.
const retryWindow = 10 * time.Second

// op is one controller operation: run executes it on the controller;
// call runs it from any broker, forwarding over HTTP when needed.
type op[Req, Resp any] struct {
	name string
	run  func(n *Node, ctx context.Context, req Req) (Resp, error)
}

// handlers maps an op name to its decoder and runner for Handler.
var handlers = map[string]func(n *Node, ctx context.Context, body []byte) (any, error){}

func defineOp[Req, Resp any](name string, run func(*Node, context.Context, Req) (Resp, error)) op[Req, Resp] {
	handlers[name] = func(n *Node, ctx context.Context, body []byte) (any, error) {
		var req Req
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, fmt.Errorf("%w: %v", metadata.ErrInvalidCommand, err)
		}
		return run(n, ctx, req)
	}
	return op[Req, Resp]{name: name, run: run}
}

// envelope is the reply of an internal request: the result and the raft
// index the controller had applied, which the caller waits for so that
// its own image shows the change it asked for.
type envelope struct {
	Index  uint64          `json:"index"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Code   string          `json:"code,omitempty"`
}

// call runs the op on the controller, wherever it is, retrying while there
// is none or it moves.
func (o op[Req, Resp]) call(n *Node, ctx context.Context, req Req) (Resp, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, retryWindow)
		defer cancel()
	}
	// Retries start fast, for the common case of a controller being
	// elected right now (a starting cluster), and slow down to
	// retryInterval while there is none.
	backoff := 5 * time.Millisecond
	for {
		var resp Resp
		var index uint64
		var err error
		if n.IsController() {
			resp, err = o.run(n, ctx, req)
		} else {
			var addr string
			if addr, err = n.controllerAddress(); err == nil {
				index, err = forward(ctx, n, addr, o.name, req, &resp, true)
			}
		}
		if err == nil {
			if o.name != opHeartbeatName {
				n.waitApplied(ctx, index)
			}
			return resp, nil
		}
		if !retriable(err) {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return resp, err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, retryInterval)
	}
}

// retryInterval is the longest pause between two attempts of a call.
const retryInterval = 100 * time.Millisecond

// retriable errors are those where the request did not reach a
// controller: there was none, it moved, or it could not be dialled.
func retriable(err error) bool {
	var netErr *dialError
	return errors.Is(err, ErrNotController) || errors.As(err, &netErr)
}

type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

func (n *Node) controllerAddress() (string, error) {
	id := n.ControllerID()
	if id < 0 {
		return "", fmt.Errorf("%w: no controller elected", ErrNotController)
	}
	b := n.Image().Broker(id)
	if b == nil || b.HTTPAddress == "" {
		return "", fmt.Errorf("%w: controller %d has not registered its address yet", ErrNotController, id)
	}
	return b.HTTPAddress, nil
}

// forward posts req to the op at addr and decodes the result into resp.
func forward(ctx context.Context, n *Node, addr, name string, req, resp any, final bool) (uint64, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return 0, err
	}
	status, out, err := n.post(ctx, addr, name, body, final)
	if err != nil {
		return 0, err
	}
	var env envelope
	if err := json.Unmarshal(out, &env); err != nil {
		return 0, fmt.Errorf("controller at %s answered %d with %q", addr, status, out)
	}
	if status != http.StatusOK {
		sentinel := metadata.ErrorForCode(env.Code)
		if sentinel == nil {
			sentinel = fmt.Errorf("controller error %s", env.Code)
		}
		return 0, &remoteError{msg: env.Error, sentinel: sentinel}
	}
	if len(env.Result) > 0 {
		if err := json.Unmarshal(env.Result, resp); err != nil {
			return 0, err
		}
	}
	return env.Index, nil
}

func (n *Node) post(ctx context.Context, addr, name string, body []byte, final bool) (int, []byte, error) {
	url := "http://" + addr + InternalPrefix + name
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	if final {
		hreq.Header.Set(forwardedHeader, "1")
	}
	res, err := n.cfg.HTTPClient.Do(hreq)
	if err != nil {
		return 0, nil, &dialError{err}
	}
	defer res.Body.Close()
	out, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	return res.StatusCode, out, err
}

// Handler serves the broker-to-controller requests under InternalPrefix
// (POST only). The broker's HTTP server mounts it. A broker that is not
// the controller forwards a request once; a request that was already
// forwarded gets 503 NOT_CONTROLLER.
func (n *Node) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, InternalPrefix)
		run, ok := handlers[name]
		if !ok {
			writeEnvelope(w, http.StatusNotFound, envelope{Code: "NOT_FOUND", Error: "no such internal path " + r.URL.Path})
			return
		}
		if r.Method != http.MethodPost {
			writeEnvelope(w, http.StatusMethodNotAllowed, envelope{Code: "METHOD_NOT_ALLOWED", Error: "use POST"})
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			writeEnvelope(w, http.StatusBadRequest, envelope{Code: "INVALID_JSON", Error: err.Error()})
			return
		}
		if !n.IsController() {
			n.proxy(w, r, name, body)
			return
		}
		res, err := run(n, r.Context(), body)
		if err != nil {
			code, status := metadata.Code(err)
			writeEnvelope(w, status, envelope{Code: code, Error: err.Error()})
			return
		}
		raw, _ := json.Marshal(res)
		writeEnvelope(w, http.StatusOK, envelope{Index: n.raft.AppliedIndex(), Result: raw})
	})
}

// proxy passes a request on to the controller, once.
func (n *Node) proxy(w http.ResponseWriter, r *http.Request, name string, body []byte) {
	fail := func(err error) {
		code, status := metadata.Code(err)
		writeEnvelope(w, status, envelope{Code: code, Error: err.Error()})
	}
	if r.Header.Get(forwardedHeader) != "" {
		fail(fmt.Errorf("%w: broker %d", ErrNotController, n.cfg.BrokerID))
		return
	}
	addr, err := n.controllerAddress()
	if err != nil {
		fail(err)
		return
	}
	status, out, err := n.post(r.Context(), addr, name, body, true)
	if err != nil {
		fail(fmt.Errorf("%w: %v", ErrNotController, err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(out)
}

func writeEnvelope(w http.ResponseWriter, status int, env envelope) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(env)
}

// waitApplied waits (briefly) until this broker has applied index, so a
// caller that forwarded a change sees it in its own image.
func (n *Node) waitApplied(ctx context.Context, index uint64) {
	deadline := time.Now().Add(3 * time.Second)
	for n.raft.AppliedIndex() < index && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
}
