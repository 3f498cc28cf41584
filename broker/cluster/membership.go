package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// membership registers this broker with the controller (joining the
// quorum first when it is new and not an initial voter), then heartbeats
// every HeartbeatInterval. A controller that no longer knows the
// registration (it was lost, or the broker was fenced as a previous
// incarnation) makes the broker register again.
//
// Removal (RemoveBroker) takes a broker out of the quorum and the
// metadata; the controller then refuses its registration with
// ErrUnknownBroker. What that means depends on the incarnation, as with
// Kafka's broker incarnations:
//
//   - A broker that registered in this process was removed while it ran.
//     It stays out (Ready says so) and does not come back behind the
//     administrator's back.
//   - A broker refused before it registered in this process is a new
//     incarnation of a removed id: a StatefulSet scaled down and up again,
//     whose returning pod kept its volume and so its raft state. It joins
//     the quorum again as a new non-voter and registers as a new broker
//     (not draining, holding nothing) that placement and rebalances fill.
//
// Its old raft state is kept: the quorum no longer sends it anything, but
// its log holds only entries the quorum committed (plus perhaps a tail
// the quorum never committed), so once the controller adds it back the
// leader repairs it like the log of any follower that was away —
// truncating what conflicts, or sending a snapshot when its own log no
// longer reaches back that far — and the metadata it replays on the way is
// history the whole quorum agreed on. A removed former voter cannot disrupt
// the quorum meanwhile: its vote requests are refused (pre-vote, and no
// member counts it), and it is added back as a non-voter. Partition
// directories of a removed broker were drained; any left are deleted by the
// replica manager once the broker has caught up, as for any broker.
func (n *Node) membership() {
	defer n.wg.Done()
	join := !n.hadState && !n.cfg.initialVoter()
	registered := false // in this process
	req := RegisterRequest{ID: n.cfg.BrokerID, HTTPAddress: n.cfg.HTTPAdvertise, PeerAddress: n.cfg.PeerAdvertise,
		RaftAddress: n.cfg.RaftAdvertise, KafkaAddress: n.cfg.KafkaAdvertise, Rack: n.cfg.Rack, Incarnation: n.incarnation}
	for n.ctx.Err() == nil {
		if n.epoch.Load() == 0 {
			ctx, cancel := context.WithTimeout(n.ctx, 5*time.Second)
			var resp RegisterResponse
			var err error
			if join {
				resp, err = n.joinThroughSeeds(ctx, req)
			} else {
				resp, err = n.registerAnywhere(ctx, req)
			}
			cancel()
			switch {
			case err == nil:
			case errors.Is(err, ErrUnknownBroker) && !join && !registered:
				n.log.Info("This broker was removed from the cluster before it started; joining again as a new non-voter",
					"error", err)
				join = true
				continue
			case errors.Is(err, ErrUnknownBroker) && registered:
				n.log.Warn("This broker was removed from the cluster while running; it stays out until it is restarted",
					"error", err)
				n.removed.Store(true)
				return
			default:
				n.log.Debug("Registration failed; retrying", "error", err)
				n.sleep(250 * time.Millisecond)
				continue
			}
			join, registered = false, true
			n.registeredAt.Store(resp.Epoch)
			n.epoch.Store(resp.Epoch)
			n.log.Info("Registered with the controller", "epoch", resp.Epoch)
		}
		ctx, cancel := context.WithTimeout(n.ctx, 2*n.cfg.HeartbeatInterval)
		sent := time.Now()
		resp, err := callAnywhere(n, ctx, opHeartbeat, HeartbeatRequest{ID: n.cfg.BrokerID, Epoch: n.epoch.Load(),
			MetadataIndex: n.Image().Index})
		cancel()
		if err == nil {
			n.heartbeatAnswered(sent, resp.MetadataIndex)
		}
		if errors.Is(err, ErrUnknownBroker) || errors.Is(err, metadata.ErrStaleBrokerEpoch) {
			n.epoch.Store(0)
			continue
		}
		n.sleep(n.cfg.HeartbeatInterval)
	}
}

// registerAnywhere registers this broker, a member of the quorum as far as
// its own raft state knows (see callAnywhere).
func (n *Node) registerAnywhere(ctx context.Context, req RegisterRequest) (RegisterResponse, error) {
	return callAnywhere(n, ctx, opRegister, req)
}

// callAnywhere runs a membership op on the controller. While raft knows of
// no leader it asks through the seeds instead of waiting for one: a broker
// the quorum removed never hears from a leader again, and only the
// controller's answer (ErrUnknownBroker) tells it so.
func callAnywhere[Req, Resp any](n *Node, ctx context.Context, o op[Req, Resp], req Req) (Resp, error) {
	if _, err := n.controllerAddress(); err == nil || n.IsController() {
		return o.call(n, ctx, req)
	}
	resp, err := throughSeeds(n, ctx, o, req)
	if err != nil && retriable(err) {
		// No seed knows a controller either (the quorum is electing one, or
		// every broker is starting): wait for one as usual.
		return o.call(n, ctx, req)
	}
	return resp, err
}

// joinThroughSeeds asks the join addresses in turn to add this broker to
// the quorum (a broker that is not the controller passes the request on).
// Once raft has heard from a leader, the ordinary path is used instead.
func (n *Node) joinThroughSeeds(ctx context.Context, req RegisterRequest) (RegisterResponse, error) {
	if _, err := n.controllerAddress(); err == nil || n.IsController() {
		return opJoin.call(n, ctx, req)
	}
	return throughSeeds(n, ctx, opJoin, req)
}

// throughSeeds sends an op to the seeds in turn until one reaches the
// controller (a seed that is not the controller passes it on), and waits
// until this broker has applied what the controller had.
func throughSeeds[Req, Resp any](n *Node, ctx context.Context, o op[Req, Resp], req Req) (Resp, error) {
	lastErr := fmt.Errorf("%w: no controller known and no seed to ask", ErrNotController)
	for _, addr := range n.seeds() {
		resp, index, err := o.forward(ctx, n, addr, req, false)
		if err == nil {
			if o.name != opHeartbeatName {
				n.waitApplied(ctx, index)
			}
			return resp, nil
		}
		if !retriable(err) {
			return resp, err
		}
		lastErr = err
	}
	var zero Resp
	return zero, lastErr
}

// seeds are the peer addresses a broker asks to reach the controller when
// raft names none: the join addresses, then the voters its own copy of the
// metadata knows (a handful, however many brokers there are).
func (n *Node) seeds() []string {
	var out []string
	add := func(addr string) {
		if addr != "" && addr != n.cfg.PeerAdvertise && !slices.Contains(out, addr) {
			out = append(out, addr)
		}
	}
	for _, a := range n.cfg.JoinAddresses {
		add(a)
	}
	img := n.Image()
	for _, id := range img.BrokerIDs() {
		if b := img.Broker(id); b != nil && b.Voter {
			add(b.PeerAddress)
		}
	}
	return out
}

func (n *Node) sleep(d time.Duration) {
	select {
	case <-n.ctx.Done():
	case <-time.After(d):
	}
}
