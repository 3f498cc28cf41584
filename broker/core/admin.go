package core

import (
	"context"
	"sort"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// Cluster administration: the metadata, the brokers, and the changes the
// controller runs (drains, removals, rebalances).

// Metadata describes the cluster.
func (b *Broker) Metadata(ctx context.Context) (*api.Metadata, error) {
	img := b.image()
	md := &api.Metadata{ClusterID: img.ClusterID, ControllerID: int32(b.node.ControllerID()),
		Brokers: img.BrokerSummaries(), Topics: []api.TopicDescription{}}
	names := img.TopicNames()
	sort.Strings(names)
	topics := make([]*metadata.Topic, len(names))
	for i, n := range names {
		topics[i] = img.Topic(n)
	}
	md.Topics = append(md.Topics, b.describe(ctx, topics)...)
	return md, nil
}

// Brokers lists the brokers.
func (b *Broker) Brokers(ctx context.Context) ([]api.BrokerInfo, error) {
	return b.image().BrokerSummaries(), nil
}

// BrokerInfo describes one broker.
func (b *Broker) BrokerInfo(ctx context.Context, id int32) (*api.BrokerInfo, error) {
	bi, err := b.node.Broker(int(id))
	if err != nil {
		return nil, apiError(err)
	}
	return &bi, nil
}

// SafeToRestart says whether stopping broker id keeps min.insync.replicas.
func (b *Broker) SafeToRestart(ctx context.Context, id int32) (*api.SafeToRestart, error) {
	r, err := b.node.SafeToRestart(int(id))
	if err != nil {
		return nil, apiError(err)
	}
	return &r, nil
}

// Drain starts moving every replica off broker id.
func (b *Broker) Drain(ctx context.Context, id int32) (int, error) {
	n, err := b.node.Drain(ctx, int(id))
	return n, apiError(err)
}

// DemoteVoter takes a broker out of the metadata quorum's voters.
func (b *Broker) DemoteVoter(ctx context.Context, id int32) error {
	return apiError(b.node.DemoteVoter(ctx, int(id)))
}

// CancelDrain lets a draining broker take replicas again.
func (b *Broker) CancelDrain(ctx context.Context, id int32) error {
	return apiError(b.node.CancelDrain(ctx, int(id)))
}

// RemoveBroker removes an empty broker from the cluster and the quorum.
func (b *Broker) RemoveBroker(ctx context.Context, id int32) error {
	return apiError(b.node.RemoveBroker(ctx, int(id)))
}

// RebalanceCluster evens out the replicas over the live brokers.
func (b *Broker) RebalanceCluster(ctx context.Context) (int, error) {
	n, err := b.node.Rebalance(ctx)
	return n, apiError(err)
}
