package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
	"github.com/kairolog/kairolog/broker/peer"
)

// opPrefix names the controller's operations on the peer transport:
// /internal/controller/create-topic and so on.
const opPrefix = "controller/"

// retryWindow bounds how long a call waits for a controller when its
// context has no deadline.
const retryWindow = 10 * time.Second

// applied is the reply of every controller operation: the result and the
// index of the controller's image after it (the metadata index), which
// the caller waits for so that its own image shows the change it asked
// for. Not raft's applied index: that counts entries no image shows (the
// barriers announcing commits, commit.go), which followers may learn of
// only much later.
type applied[Resp any] struct {
	Index  uint64 `json:"index"`
	Result Resp   `json:"result"`
}

// op is one controller operation: run executes it on the controller;
// call runs it from any broker, over the peer transport when needed.
type op[Req, Resp any] struct {
	name string
	peer peer.Op[Req, applied[Resp]]
	run  func(n *Node, ctx context.Context, req Req) (Resp, error)
}

// servers register every op on a broker's peer listener (ServePeer).
var servers []func(n *Node, m *peer.Mux)

func defineOp[Req, Resp any](name string, run func(*Node, context.Context, Req) (Resp, error)) op[Req, Resp] {
	o := op[Req, Resp]{name: name, peer: peer.NewOp[Req, applied[Resp]](opPrefix + name), run: run}
	servers = append(servers, func(n *Node, m *peer.Mux) { peer.Handle(m, o.peer, o.serve(n)) })
	return o
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
			id := n.ControllerID()
			if addr, err = n.controllerAddress(); err == nil {
				resp, index, err = o.forwardWhileController(ctx, n, id, addr, req)
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
	return errors.Is(err, ErrNotController) || peer.IsUnreachable(err)
}

func (n *Node) controllerAddress() (string, error) {
	id := n.ControllerID()
	if id < 0 {
		return "", fmt.Errorf("%w: no controller elected", ErrNotController)
	}
	b := n.Image().Broker(id)
	if b == nil || b.PeerAddress == "" {
		return "", fmt.Errorf("%w: controller %d has not registered its peer address yet", ErrNotController, id)
	}
	return b.PeerAddress, nil
}

// forward sends req to the op at addr. final marks it forwarded: the
// receiver runs it if it is the controller and refuses it otherwise.
// forwardWhileController forwards req to controller id at addr for as long
// as this node sees id lead the quorum. A controller that stalls (a paused
// or frozen process) keeps the connection open and never answers, and the
// quorum elects another: the attempt is then abandoned as NOT_CONTROLLER,
// which call retries on the new controller, instead of holding the request
// for the caller's whole deadline. The stalled one cannot commit it: it no
// longer leads a quorum.
func (o op[Req, Resp]) forwardWhileController(ctx context.Context, n *Node, id int, addr string, req Req) (Resp, uint64, error) {
	attempt, cancel := context.WithCancel(ctx)
	defer cancel()
	replaced := make(chan struct{})
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(retryInterval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if n.ControllerID() != id {
					close(replaced)
					cancel()
					return
				}
			}
		}
	}()
	resp, index, err := o.forward(attempt, n, addr, req, true)
	if err != nil && ctx.Err() == nil {
		select {
		case <-replaced:
			err = fmt.Errorf("%w: controller %d was replaced while it held the request", ErrNotController, id)
		default:
		}
	}
	return resp, index, err
}

func (o op[Req, Resp]) forward(ctx context.Context, n *Node, addr string, req Req, final bool) (Resp, uint64, error) {
	var opts []peer.CallOption
	if final {
		opts = append(opts, peer.Forwarded())
	}
	out, err := peer.Call(ctx, n.cfg.Peer, addr, o.peer, req, opts...)
	if err != nil {
		return out.Result, 0, fromWire(err)
	}
	return out.Result, out.Index, nil
}

// serve is the op's handler on the peer listener. A broker that is not the
// controller passes a request on to it once; a request that was already
// passed on gets 503 NOT_CONTROLLER.
func (o op[Req, Resp]) serve(n *Node) func(ctx context.Context, req Req) (applied[Resp], error) {
	return func(ctx context.Context, req Req) (applied[Resp], error) {
		if n.IsController() {
			resp, err := o.run(n, ctx, req)
			if err != nil {
				return applied[Resp]{}, toWire(err)
			}
			return applied[Resp]{Index: n.Image().Index, Result: resp}, nil
		}
		if peer.IsForwarded(ctx) {
			return applied[Resp]{}, toWire(fmt.Errorf("%w: broker %d", ErrNotController, n.cfg.BrokerID))
		}
		addr, err := n.controllerAddress()
		if err != nil {
			return applied[Resp]{}, toWire(err)
		}
		resp, index, err := o.forward(ctx, n, addr, req, true)
		if err != nil {
			if peer.IsUnreachable(err) {
				err = fmt.Errorf("%w: %v", ErrNotController, err)
			}
			return applied[Resp]{}, toWire(err)
		}
		return applied[Resp]{Index: index, Result: resp}, nil
	}
}

// toWire is the *api.Error of an error of this package: an answer from
// another broker keeps its code, the sentinels get theirs.
func toWire(err error) error {
	var re *remoteError
	if errors.As(err, &re) {
		return re.wire
	}
	code, _ := metadata.Code(err)
	return api.Errorf(code, "%v", err)
}

// fromWire turns a controller's error reply back into an error that
// errors.Is matches against the sentinel its code names; an unreachable
// peer and the caller's own deadline pass through. A code no sentinel
// names (the controller failed, or refused this broker's secret) is an
// error of the controller, not of the request, so it does not reach
// clients as if it were theirs.
func fromWire(err error) error {
	var ae *api.Error
	if !errors.As(err, &ae) {
		return err
	}
	sentinel := metadata.ErrorForCode(ae.Code)
	if sentinel == nil {
		sentinel = fmt.Errorf("controller answered %s", ae.Code)
	}
	return &remoteError{msg: ae.Message, sentinel: sentinel, wire: ae}
}

// ServePeer registers the controller operations on a broker's peer
// listener.
func (n *Node) ServePeer(m *peer.Mux) {
	for _, s := range servers {
		s(n, m)
	}
}

// waitApplied waits (briefly) until this broker's image has reached
// metadata index index, so a caller that forwarded a change sees it in its
// own image. (Raft's applied index moves when an entry is handed to the
// state machine, a moment before the image shows it.)
func (n *Node) waitApplied(ctx context.Context, index uint64) {
	deadline := time.Now().Add(3 * time.Second)
	for n.Image().Index < index && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
}
