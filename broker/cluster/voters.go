package cluster

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/hashicorp/raft"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// Removing a voter of the metadata quorum. A quorum of v voters survives
// the loss of (v-1)/2 of them; removing a broker for good must not lower
// that, or the quorum shrinks for good (a broker that comes back with the
// removed id joins as a non-voter). So before a voter leaves, a live
// non-voter is promoted in its place whenever the voters left would
// tolerate fewer failures: three voters stay three, one stays one. Going
// from an even number to the odd number below it loses nothing (two voters
// tolerate no failure, as one does) and promotes nobody. With nobody to
// promote, the removal is refused with ErrVoterNotReplaceable: add a
// broker first. This is the rule Kafka gives for KRaft controller quorums
// (an odd number of voters; replace a voter before removing it).

// faultTolerance is how many of v voters may be lost with the quorum still
// able to commit.
func faultTolerance(v int) int { return (v - 1) / 2 }

// voterIDs returns the ids of the voters in the raft configuration.
func voterIDs(servers []raft.Server) []int {
	var out []int
	for _, s := range servers {
		if s.Suffrage == raft.Voter {
			out = append(out, serverID(s))
		}
	}
	return out
}

// replaceVoter keeps the quorum's fault tolerance when voter id leaves it:
// it promotes a live non-voter if the voters left without id would
// tolerate fewer failures, and otherwise does nothing. The caller holds
// adminMu and is the controller.
func (n *Node) replaceVoter(ctx context.Context, id int) error {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return err
	}
	servers := f.Configuration().Servers
	voters := voterIDs(servers)
	if !slices.Contains(voters, id) {
		return nil
	}
	if left := len(voters) - 1; left > 0 && faultTolerance(left) >= faultTolerance(len(voters)) {
		return nil
	}
	img := n.Image()
	s, ok := pickReplacement(img, servers, id)
	if !ok {
		return fmt.Errorf("%w: broker %d is one of the %d voters of the metadata quorum; without it %s, "+
			"and no live broker outside the quorum can take its vote: add a broker, then remove this one",
			ErrVoterNotReplaceable, id, len(voters), quorumLeft(len(voters)-1))
	}
	if err := n.raft.AddVoter(s.ID, s.Address, 0, applyTimeout).Error(); err != nil {
		return fmt.Errorf("%w: promote broker %s to voter: %v", ErrNotController, s.ID, err)
	}
	n.log.Info("Promoted a broker to voter of the metadata quorum in place of one leaving it",
		"promoted", string(s.ID), "leaving", id)
	return n.recordSuffrage(ctx, serverID(s), true)
}

// recordSuffrage records in broker id's registration whether it votes
// (GET /brokers shows it). The broker's next heartbeat then carries a
// stale epoch and it registers again, as after any re-registration.
func (n *Node) recordSuffrage(ctx context.Context, id int, voter bool) error {
	b := n.Image().Broker(id)
	if b == nil {
		return nil // not registered yet: its registration will say
	}
	_, err := n.apply(ctx, metadata.Command{Type: metadata.CmdRegisterBroker, RegisterBroker: &metadata.RegisterBroker{
		ID: b.ID, HTTPAddress: b.HTTPAddress, PeerAddress: b.PeerAddress, RaftAddress: b.RaftAddress,
		KafkaAddress: b.KafkaAddress, Rack: b.Rack, Voter: voter}})
	return err
}

// demoteVoter takes broker id out of the quorum's voters; it stays a
// broker and follows the metadata as a non-voter (Kafka's
// RemoveRaftVoter). The same rule as for a removal keeps the quorum's
// fault tolerance. A broker that is not a voter is left as it is.
func (n *Node) demoteVoter(ctx context.Context, req BrokerRequest) (Empty, error) {
	if _, err := n.controller(); err != nil {
		return Empty{}, err
	}
	n.adminMu.Lock()
	defer n.adminMu.Unlock()
	s, ok, err := n.raftServer(req.ID)
	if err != nil {
		return Empty{}, err
	}
	if !ok {
		return Empty{}, fmt.Errorf("%w: %d is not a member of the metadata quorum", ErrUnknownBroker, req.ID)
	}
	if s.Suffrage != raft.Voter {
		return Empty{}, nil
	}
	if err := n.replaceVoter(ctx, req.ID); err != nil {
		return Empty{}, err
	}
	if err := n.handOver(req.ID); err != nil {
		return Empty{}, err
	}
	if err := n.raft.DemoteVoter(s.ID, 0, applyTimeout).Error(); err != nil {
		return Empty{}, fmt.Errorf("%w: demote broker %d: %v", ErrNotController, req.ID, err)
	}
	n.log.Info("Broker left the voters of the metadata quorum", "broker", req.ID)
	return Empty{}, n.recordSuffrage(ctx, req.ID, false)
}

// handOver makes a controller that is about to leave the voters hand the
// controllership to another voter first: it answers ErrNotController, so
// that the call goes on at the new controller.
func (n *Node) handOver(leaving int) error {
	if leaving != n.cfg.BrokerID {
		return nil
	}
	if err := n.raft.LeadershipTransfer().Error(); err != nil {
		return fmt.Errorf("%w: hand the controllership over before leaving the voters: %v", ErrNotController, err)
	}
	return fmt.Errorf("%w: broker %d handed the controllership over before leaving the voters", ErrNotController, leaving)
}

// quorumLeft says what a quorum of v voters can survive.
func quorumLeft(v int) string {
	switch {
	case v == 0:
		return "no voter would be left"
	case faultTolerance(v) == 0:
		return fmt.Sprintf("the %d voters left could not lose one", v)
	default:
		return fmt.Sprintf("the %d voters left could lose only %d", v, faultTolerance(v))
	}
}

// pickReplacement chooses the non-voter to promote in place of voter id:
// a member of the quorum that is registered, not fenced and not draining,
// preferring the removed voter's rack (so voters stay spread over racks),
// then the lowest id.
func pickReplacement(img *metadata.Image, servers []raft.Server, id int) (raft.Server, bool) {
	rack := ""
	if b := img.Broker(id); b != nil {
		rack = b.Rack
	}
	var candidates []raft.Server
	for _, s := range servers {
		if s.Suffrage != raft.Nonvoter {
			continue
		}
		if serverID(s) == id {
			continue
		}
		if b := img.Broker(serverID(s)); b != nil && !b.Fenced && !b.Draining {
			candidates = append(candidates, s)
		}
	}
	if len(candidates) == 0 {
		return raft.Server{}, false
	}
	slices.SortFunc(candidates, func(a, b raft.Server) int {
		ra, rb := img.Broker(serverID(a)).Rack == rack, img.Broker(serverID(b)).Rack == rack
		if ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return cmp.Compare(serverID(a), serverID(b))
	})
	return candidates[0], true
}

// serverID is the broker id of a raft server (ids are written by this
// package, always numbers).
func serverID(s raft.Server) int {
	n, _ := strconv.Atoi(string(s.ID))
	return n
}
