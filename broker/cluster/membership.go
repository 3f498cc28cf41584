package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// membership registers this broker with the controller (joining the
// quorum first when it is new and not an initial voter), then heartbeats
// every HeartbeatInterval. A controller that no longer knows the
// registration (it was lost, or the broker was fenced as a previous
// incarnation) makes the broker register again.
func (n *Node) membership() {
	defer n.wg.Done()
	join := !n.hadState && !n.cfg.initialVoter()
	req := RegisterRequest{ID: n.cfg.BrokerID, HTTPAddress: n.cfg.HTTPAdvertise,
		RaftAddress: n.cfg.RaftAdvertise, Rack: n.cfg.Rack}
	for n.ctx.Err() == nil {
		if n.epoch.Load() == 0 {
			ctx, cancel := context.WithTimeout(n.ctx, 5*time.Second)
			var resp RegisterResponse
			var err error
			if join {
				resp, err = n.joinThroughSeeds(ctx, req)
			} else {
				resp, err = opRegister.call(n, ctx, req)
			}
			cancel()
			if err != nil {
				n.log.Debug("Registration failed; retrying", "error", err)
				n.sleep(250 * time.Millisecond)
				continue
			}
			join = false
			n.registeredAt.Store(resp.Epoch)
			n.epoch.Store(resp.Epoch)
			n.log.Info("Registered with the controller", "epoch", resp.Epoch)
		}
		ctx, cancel := context.WithTimeout(n.ctx, 2*n.cfg.HeartbeatInterval)
		_, err := opHeartbeat.call(n, ctx, HeartbeatRequest{ID: n.cfg.BrokerID, Epoch: n.epoch.Load()})
		cancel()
		if errors.Is(err, ErrUnknownBroker) || errors.Is(err, metadata.ErrStaleBrokerEpoch) {
			n.epoch.Store(0)
			continue
		}
		n.sleep(n.cfg.HeartbeatInterval)
	}
}

// joinThroughSeeds asks the join addresses in turn to add this broker to
// the quorum (a broker that is not the controller passes the request on).
// Once raft has heard from a leader, the ordinary path is used instead.
func (n *Node) joinThroughSeeds(ctx context.Context, req RegisterRequest) (RegisterResponse, error) {
	if _, err := n.controllerAddress(); err == nil || n.IsController() {
		return opJoin.call(n, ctx, req)
	}
	lastErr := ErrNotController
	for _, addr := range n.cfg.JoinAddresses {
		var resp RegisterResponse
		index, err := forward(ctx, n, addr, opJoin.name, req, &resp, false)
		if err == nil {
			n.waitApplied(ctx, index)
			return resp, nil
		}
		lastErr = err
	}
	return RegisterResponse{}, lastErr
}

func (n *Node) sleep(d time.Duration) {
	select {
	case <-n.ctx.Done():
	case <-time.After(d):
	}
}
