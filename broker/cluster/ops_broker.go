package cluster

import (
	"context"
	"fmt"
	"strconv"

	"github.com/hashicorp/raft"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// RegisterRequest introduces a broker to the controller. Incarnation is
// a random id of the registering process.
type RegisterRequest struct {
	ID          int    `json:"id"`
	HTTPAddress string `json:"http_address"`
	PeerAddress string `json:"peer_address"`
	RaftAddress string `json:"raft_address"`
	// KafkaAddress is where Kafka clients reach the broker's Kafka
	// listener (empty: it has none).
	KafkaAddress string `json:"kafka_address,omitempty"`
	Rack         string `json:"rack,omitempty"`
	Incarnation  string `json:"incarnation,omitempty"`
}

// RegisterResponse carries the broker's new registration epoch.
type RegisterResponse struct {
	Epoch uint64 `json:"epoch"`
}

// HeartbeatRequest is a broker's periodic sign of life. MetadataIndex is
// the index of the metadata image the broker has applied, so that the
// controller knows which changes every broker has seen (propagation.go).
type HeartbeatRequest struct {
	ID            int    `json:"id"`
	Epoch         uint64 `json:"epoch"`
	MetadataIndex uint64 `json:"metadata_index,omitempty"`
}

// HeartbeatResponse tells the broker whether it is fenced, and how far the
// metadata went by the time the controller answered: once the broker's own
// image has reached MetadataIndex, its metadata is known to be current as
// of when it sent the heartbeat (see lease.go).
type HeartbeatResponse struct {
	Fenced        bool   `json:"fenced"`
	MetadataIndex uint64 `json:"metadata_index,omitempty"`
}

// BrokerRequest names one broker.
type BrokerRequest struct {
	ID int `json:"id"`
}

// DrainResponse is the answer to a drain.
type DrainResponse struct {
	RemainingReplicas int `json:"remaining_replicas"`
}

// opHeartbeatName is the one op whose caller need not wait to apply the
// controller's index: a heartbeat changes nothing.
const opHeartbeatName = "heartbeat"

// Empty is the reply of operations that return nothing.
type Empty struct{}

var (
	opJoin       = defineOp("join", (*Node).join)
	opRegister   = defineOp("register", (*Node).register)
	opHeartbeat  = defineOp(opHeartbeatName, (*Node).heartbeat)
	opShutdown   = defineOp("controlled-shutdown", (*Node).controlledShutdown)
	opDrain      = defineOp("drain", (*Node).drain)
	opCancel     = defineOp("cancel-drain", (*Node).cancelDrain)
	opRemove     = defineOp("remove-broker", (*Node).removeBroker)
	opDemote     = defineOp("demote-voter", (*Node).demoteVoter)
	opRebalancer = defineOp("rebalance", (*Node).rebalance)
)

// raftServer returns the raft configuration entry of broker id.
func (n *Node) raftServer(id int) (raft.Server, bool, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return raft.Server{}, false, err
	}
	for _, s := range f.Configuration().Servers {
		if s.ID == raft.ServerID(strconv.Itoa(id)) {
			return s, true, nil
		}
	}
	return raft.Server{}, false, nil
}

// join adds a new broker to the quorum as a non-voter, then registers it.
func (n *Node) join(ctx context.Context, req RegisterRequest) (RegisterResponse, error) {
	if _, err := n.controller(); err != nil {
		return RegisterResponse{}, err
	}
	s, ok, err := n.raftServer(req.ID)
	if err != nil {
		return RegisterResponse{}, err
	}
	if !ok || string(s.Address) != req.RaftAddress {
		add := n.raft.AddNonvoter
		if ok && s.Suffrage == raft.Voter {
			add = n.raft.AddVoter
		}
		if err := add(raft.ServerID(strconv.Itoa(req.ID)), raft.ServerAddress(req.RaftAddress), 0, applyTimeout).Error(); err != nil {
			return RegisterResponse{}, fmt.Errorf("%w: add broker %d to the quorum: %v", ErrNotController, req.ID, err)
		}
		n.log.Info("Broker joined the metadata quorum", "joined", req.ID, "raft_address", req.RaftAddress)
	}
	return n.register(ctx, req)
}

// register records a broker that is a member of the quorum. A broker that
// is not (it was removed) is refused with ErrUnknownBroker: a removed
// broker still running stays out, and a new incarnation of it takes the
// refusal as its cue to join again (membership).
func (n *Node) register(ctx context.Context, req RegisterRequest) (RegisterResponse, error) {
	ctl, err := n.controller()
	if err != nil {
		return RegisterResponse{}, err
	}
	s, ok, err := n.raftServer(req.ID)
	if err != nil {
		return RegisterResponse{}, err
	}
	if !ok {
		return RegisterResponse{}, fmt.Errorf("%w: broker %d is not a member of the metadata quorum", ErrUnknownBroker, req.ID)
	}
	reg := &metadata.RegisterBroker{ID: req.ID, HTTPAddress: req.HTTPAddress, PeerAddress: req.PeerAddress,
		RaftAddress: req.RaftAddress, KafkaAddress: req.KafkaAddress, Rack: req.Rack, Voter: s.Suffrage == raft.Voter, Incarnation: req.Incarnation}
	old := n.Image().Broker(req.ID)
	restart := old != nil && !old.Fenced && old.Incarnation != req.Incarnation
	if restart {
		// A restart before the old incarnation was fenced: name the
		// brokers known to be up, which take over from it (see
		// metadata's endIncarnation).
		reg.Heard = ctl.heardFrom(req.ID)
	}
	idx, err := n.apply(ctx, metadata.Command{Type: metadata.CmdRegisterBroker, RegisterBroker: reg})
	if err != nil {
		return RegisterResponse{}, err
	}
	ctl.touch(req.ID, restart)
	return RegisterResponse{Epoch: idx}, nil
}

func (n *Node) heartbeat(_ context.Context, req HeartbeatRequest) (HeartbeatResponse, error) {
	ctl, err := n.controller()
	if err != nil {
		return HeartbeatResponse{}, err
	}
	return ctl.heartbeat(req.ID, req.Epoch, req.MetadataIndex)
}

func (n *Node) brokerCommand(ctx context.Context, t metadata.CommandType, id int) error {
	if _, err := n.controller(); err != nil {
		return err
	}
	_, err := n.apply(ctx, metadata.Command{Type: t, Broker: &metadata.BrokerRef{ID: id}})
	return err
}

func (n *Node) controlledShutdown(ctx context.Context, req BrokerRequest) (Empty, error) {
	return Empty{}, n.brokerCommand(ctx, metadata.CmdControlledStop, req.ID)
}

// drain checks that the other brokers can take the broker's replicas,
// marks it draining and starts the moves; the controller loop finishes
// them as the new replicas catch up.
func (n *Node) drain(ctx context.Context, req BrokerRequest) (DrainResponse, error) {
	if _, err := n.controller(); err != nil {
		return DrainResponse{}, err
	}
	n.adminMu.Lock()
	defer n.adminMu.Unlock()
	img := n.Image()
	if img.Broker(req.ID) == nil {
		return DrainResponse{}, fmt.Errorf("%w: %d", ErrUnknownBroker, req.ID)
	}
	moves, err := metadata.NewPlanner(img).DrainMoves(req.ID)
	if err != nil {
		return DrainResponse{}, err
	}
	if err := n.brokerCommand(ctx, metadata.CmdDrain, req.ID); err != nil {
		return DrainResponse{}, err
	}
	if len(moves) > 0 {
		if _, err := n.apply(ctx, metadata.Command{Type: metadata.CmdReassign, Reassign: &metadata.Reassign{Moves: moves}}); err != nil {
			return DrainResponse{}, err
		}
	}
	return DrainResponse{RemainingReplicas: n.Image().ReplicaCount(req.ID)}, nil
}

func (n *Node) cancelDrain(ctx context.Context, req BrokerRequest) (Empty, error) {
	return Empty{}, n.brokerCommand(ctx, metadata.CmdCancelDrain, req.ID)
}

// removeBroker takes an empty broker out of the quorum and then out of
// the metadata. The quorum goes first so that the broker, if still
// running, cannot register again in between. The id can be used again: a
// broker started later with it joins as a new non-voter. A voter leaves
// only once the quorum keeps its fault tolerance without it (voters.go);
// a controller removing itself hands the controllership over first and
// answers ErrNotController, so that the call goes on at the new
// controller.
func (n *Node) removeBroker(ctx context.Context, req BrokerRequest) (Empty, error) {
	if _, err := n.controller(); err != nil {
		return Empty{}, err
	}
	n.adminMu.Lock()
	defer n.adminMu.Unlock()
	img := n.Image()
	_, inQuorum, err := n.raftServer(req.ID)
	if err != nil {
		return Empty{}, err
	}
	registered := img.Broker(req.ID) != nil
	if !registered && !inQuorum {
		return Empty{}, fmt.Errorf("%w: %d", ErrUnknownBroker, req.ID)
	}
	if c := img.ReplicaCount(req.ID); c > 0 {
		return Empty{}, fmt.Errorf("%w: broker %d holds %d replicas; drain it first", ErrBrokerNotEmpty, req.ID, c)
	}
	if inQuorum {
		if err := n.replaceVoter(ctx, req.ID); err != nil {
			return Empty{}, err
		}
		if err := n.handOver(req.ID); err != nil {
			return Empty{}, err
		}
		if err := n.raft.RemoveServer(raft.ServerID(strconv.Itoa(req.ID)), 0, applyTimeout).Error(); err != nil {
			return Empty{}, fmt.Errorf("%w: remove broker %d from the quorum: %v", ErrNotController, req.ID, err)
		}
	}
	if registered {
		if _, err := n.apply(ctx, metadata.Command{Type: metadata.CmdRemoveBroker, Broker: &metadata.BrokerRef{ID: req.ID}}); err != nil {
			return Empty{}, err
		}
	}
	n.log.Info("Removed broker from the cluster", "removed", req.ID)
	return Empty{}, nil
}

// RebalanceResponse counts the replica moves a rebalance started.
type RebalanceResponse struct {
	Moves int `json:"moves"`
}

func (n *Node) rebalance(ctx context.Context, _ Empty) (RebalanceResponse, error) {
	if _, err := n.controller(); err != nil {
		return RebalanceResponse{}, err
	}
	n.adminMu.Lock()
	defer n.adminMu.Unlock()
	moves := metadata.NewPlanner(n.Image()).RebalanceMoves()
	if len(moves) == 0 {
		return RebalanceResponse{}, nil
	}
	_, err := n.apply(ctx, metadata.Command{Type: metadata.CmdReassign, Reassign: &metadata.Reassign{Moves: moves}})
	return RebalanceResponse{Moves: len(moves)}, err
}
