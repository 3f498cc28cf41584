package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// Producer ids for idempotent producers come from the metadata quorum in
// blocks (Kafka's AllocateProducerIds, KIP-730): a broker asks the
// controller for a block, which the controller commits to the metadata log
// before answering, and hands its ids out one by one. A committed block is
// never handed out again — not after a controller failover, which reads
// the next free id from the replicated image, nor after the broker
// restarts, which only leaves the rest of its block unused.

// ProducerIDBlock is a block of producer ids given to one broker.
type ProducerIDBlock struct {
	First int64 `json:"first"`
	Count int64 `json:"count"`
}

// AllocateProducerIDsRequest asks for a block of Count ids for Broker.
type AllocateProducerIDsRequest struct {
	Broker int   `json:"broker"`
	Count  int64 `json:"count"`
}

var opProducerIDs = defineOp("allocate-producer-ids", (*Node).allocateProducerIDs)

// AllocateProducerIDs reserves a block of count producer ids for this
// broker through the controller.
func (n *Node) AllocateProducerIDs(ctx context.Context, count int64) (ProducerIDBlock, error) {
	return opProducerIDs.call(n, ctx, AllocateProducerIDsRequest{Broker: n.cfg.BrokerID, Count: count})
}

// allocateProducerIDs runs on the controller. The command names the next
// free id it read, so it commits at most once; a proposal that finds the
// image moved on reads it again.
func (n *Node) allocateProducerIDs(ctx context.Context, req AllocateProducerIDsRequest) (ProducerIDBlock, error) {
	ctl, err := n.controller()
	if err != nil {
		return ProducerIDBlock{}, err
	}
	if !ctl.ready.Load() {
		// Earlier terms' entries may not be applied here yet.
		return ProducerIDBlock{}, fmt.Errorf("%w: broker %d has not caught up as controller", ErrNotController, n.cfg.BrokerID)
	}
	n.adminMu.Lock()
	defer n.adminMu.Unlock()
	for range 3 {
		from := n.Image().NextProducerID
		_, err = n.apply(ctx, metadata.Command{Type: metadata.CmdAllocateIDs,
			AllocateIDs: &metadata.AllocateIDs{Broker: req.Broker, From: from, Count: req.Count}})
		if err == nil {
			return ProducerIDBlock{First: from, Count: req.Count}, nil
		}
		if !errors.Is(err, metadata.ErrStaleProducerIDs) {
			return ProducerIDBlock{}, err
		}
	}
	return ProducerIDBlock{}, err
}
