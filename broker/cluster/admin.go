package cluster

import (
	"context"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// The admin operations below work on any broker: on the controller they
// run locally, elsewhere they are forwarded to it over HTTP (retrying for
// up to the context's deadline, or 10 s, while there is no controller).
// When they return, this broker's own Image already shows their effect.
// Errors wrap the package's sentinels; ErrorCode maps them to API codes.

// CreateTopic creates a user topic, placing its replicas across racks and
// brokers.
func (n *Node) CreateTopic(ctx context.Context, req CreateTopicRequest) (*metadata.Topic, error) {
	return opCreateTopic.call(n, ctx, req)
}

// DeleteTopic deletes a topic. It names the topic by the ID this broker
// knows it by, so that a delete retried after a controller failover
// neither answers UNKNOWN_TOPIC for its own success nor deletes a topic
// created again under the same name in between.
func (n *Node) DeleteTopic(ctx context.Context, name string) error {
	req := TopicRequest{Name: name}
	if t := n.Image().Topic(name); t != nil {
		req.ID = t.ID
	}
	_, err := opDeleteTopic.call(n, ctx, req)
	return err
}

// CreatePartitions raises a topic's partition count; the same count
// changes nothing and a smaller one is ErrInvalidPartitions. Sent again
// after a controller failover, it adds the partitions only once.
func (n *Node) CreatePartitions(ctx context.Context, topic string, partitions int) (*metadata.Topic, error) {
	return opPartitions.call(n, ctx, CreatePartitionsRequest{Topic: topic, Partitions: partitions})
}

// AlterConfig changes a topic's overrides and returns the new ones.
func (n *Node) AlterConfig(ctx context.Context, req AlterConfigRequest) (map[string]string, error) {
	return opAlterConfig.call(n, ctx, req)
}

// ChangeReplicationFactor starts reassignments that give every partition
// of the topic rf replicas and returns how many partitions move. Added
// replicas join the ISR before removed ones leave.
func (n *Node) ChangeReplicationFactor(ctx context.Context, topic string, rf int) (int, error) {
	r, err := opReplication.call(n, ctx, ReplicationFactorRequest{Topic: topic, ReplicationFactor: rf})
	return r.Moves, err
}

// AlterISR commits a partition leader's new ISR and returns the partition
// as committed (with its new PartitionEpoch). See the package doc.
func (n *Node) AlterISR(ctx context.Context, req metadata.AlterISR) (*metadata.Partition, error) {
	return opAlterISR.call(n, ctx, req)
}

// EnsureOffsetsTopic returns __consumer_offsets, creating it on first use.
func (n *Node) EnsureOffsetsTopic(ctx context.Context) (*metadata.Topic, error) {
	if t := n.Image().Topic(OffsetsTopic); t != nil {
		return t, nil
	}
	return opOffsetsTopic.call(n, ctx, Empty{})
}

// ControlledShutdown prepares this broker to stop: its leaderships move
// to other ISR members and it leaves every ISR it is not the last member
// of, before it stops serving. It stays fenced until it registers again
// (its next start). Call Close afterwards.
func (n *Node) ControlledShutdown(ctx context.Context) error {
	_, err := opShutdown.call(n, ctx, BrokerRequest{ID: n.cfg.BrokerID})
	return err
}

// Drain marks a broker draining and moves every replica it holds to other
// brokers; it returns how many replicas are still on it. The broker is
// reported "drained" once it holds none. ErrReassignmentInfeasible means
// the other live brokers cannot hold its replicas (nothing changed).
func (n *Node) Drain(ctx context.Context, id int) (int, error) {
	r, err := opDrain.call(n, ctx, BrokerRequest{ID: id})
	return r.RemainingReplicas, err
}

// CancelDrain makes a draining broker eligible again and reverts the
// moves off it that have not completed.
func (n *Node) CancelDrain(ctx context.Context, id int) error {
	_, err := opCancel.call(n, ctx, BrokerRequest{ID: id})
	return err
}

// RemoveBroker removes an empty broker from the metadata quorum and the
// cluster (ErrBrokerNotEmpty while it holds replicas). A removed broker
// that is still running cannot register again.
func (n *Node) RemoveBroker(ctx context.Context, id int) error {
	_, err := opRemove.call(n, ctx, BrokerRequest{ID: id})
	return err
}

// DemoteVoter takes a broker out of the metadata quorum's voters; it stays
// a broker, following the metadata as a non-voter. Like RemoveBroker of a
// voter it first promotes a non-voter when the voters left would tolerate
// fewer failures, and answers ErrVoterNotReplaceable when none can be.
func (n *Node) DemoteVoter(ctx context.Context, id int) error {
	_, err := opDemote.call(n, ctx, BrokerRequest{ID: id})
	return err
}

// Rebalance moves replicas so every live broker holds a fair share and
// returns how many partitions move.
func (n *Node) Rebalance(ctx context.Context) (int, error) {
	r, err := opRebalancer.call(n, ctx, Empty{})
	return r.Moves, err
}

// SafeToRestart answers GET /brokers/{id}/safe-to-restart from this
// broker's image.
func (n *Node) SafeToRestart(id int) (api.SafeToRestart, error) {
	return n.Image().SafeToRestart(id, n.cfg.DefaultMinInsyncReplicas)
}

// Brokers returns every broker's summary for GET /brokers.
func (n *Node) Brokers() []api.BrokerInfo { return n.Image().BrokerSummaries() }

// Broker returns one broker's summary (ErrUnknownBroker if none).
func (n *Node) Broker(id int) (api.BrokerInfo, error) { return n.Image().BrokerSummary(id) }
