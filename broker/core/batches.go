package core

import (
	"context"
	"errors"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
	"github.com/kairolog/kairolog/broker/memory"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/replica"
)

// ProduceBatch appends one encoded batch (Kafka's RecordBatch v2, as a
// Kafka producer encodes it) to a partition. The log checks it and stores
// it as it is but for its base offset and partition leader epoch; a retry
// of an idempotent producer's batch is not stored again and is answered
// with where it already is. It runs on the partition's leader: passed on
// once over the peer transport, or refused with NOT_LEADER when ctx is
// Local.
func (b *Broker) ProduceBatch(ctx context.Context, req api.ProduceBatchRequest) (api.ProduceBatchResult, error) {
	if req.Timeout <= 0 {
		req.Timeout = defaultProduceTimeout
	}
	t, part, err := b.batchPartition(ctx, req.Topic, req.TopicID, req.Partition)
	if err != nil {
		return api.ProduceBatchResult{}, err
	}
	if t.Internal {
		return api.ProduceBatchResult{}, api.Errorf(api.CodeInternalTopic, "topic %q is internal; clients cannot write to it", t.Name)
	}
	if leader := int32(part.Leader); leader != b.id && leader >= 0 {
		if err := b.elsewhere(ctx, t.Name, req.Partition, leader, int32(part.LeaderEpoch)); err != nil {
			return api.ProduceBatchResult{}, err
		}
		return forward(ctx, b, leader, int32(part.LeaderEpoch), opProduceBatch, req, api.CodeLeaderNotAvailable)
	}
	return b.appendBatch(replica.WithTopicID(ctx, t.ID), t.Name, req)
}

// appendBatch appends req's batch to this broker's replica of the
// partition, or passes it on to the leader the replica names.
func (b *Broker) appendBatch(ctx context.Context, topic string, req api.ProduceBatchRequest) (api.ProduceBatchResult, error) {
	acks := replica.Acks(1)
	if req.Acks == api.AcksAll {
		acks = replica.AcksAll
	}
	p := req.Partition
	batch := replica.Batch{Encoded: req.Batch}
	res, err := b.replicas.ProduceBatch(ctx, topic, p, batch, acks, req.Timeout)
	if err != nil && b.lagging(err, topic, p) && b.awaitLeader(ctx, topic, p) {
		res, err = b.replicas.ProduceBatch(ctx, topic, p, batch, acks, req.Timeout)
	}
	var nl *replica.NotLeaderError
	if errors.As(err, &nl) && nl.Leader >= 0 && nl.Leader != b.id {
		// Nothing was written: the leadership moved before this broker's
		// image showed it.
		if err := b.elsewhere(ctx, topic, p, nl.Leader, nl.Epoch); err != nil {
			return api.ProduceBatchResult{}, err
		}
		return forward(ctx, b, nl.Leader, nl.Epoch, opProduceBatch, req, api.CodeLeaderNotAvailable)
	}
	out := api.ProduceBatchResult{BaseOffset: res.BaseOffset, LastOffset: res.LastOffset, LogStartOffset: -1, Duplicate: res.Duplicate}
	if err == nil || errors.Is(err, replica.ErrNotEnoughReplicasAfterAppend) {
		if info, ierr := b.replicas.PartitionInfo(topic, p); ierr == nil {
			out.LogStartOffset = info.LogStartOffset
		}
	}
	return out, batchError(err)
}

// batchPartition is the topic and partition a batch request names, on an
// image that has caught up with a forwarding broker's.
func (b *Broker) batchPartition(ctx context.Context, topic, topicID string, p int32) (*metadata.Topic, *metadata.Partition, error) {
	img := b.image()
	if topic == "" && topicID != "" {
		if t, err := topicByNameOrID(img, "", topicID); err == nil {
			topic = t.Name
		}
	}
	img = b.awaitLeadership(ctx, topic, p)
	t, err := topicByNameOrID(img, topic, topicID)
	if err != nil {
		return nil, nil, err
	}
	if p < 0 || int(p) >= len(t.Partitions) {
		return nil, nil, errUnknownPartition(t.Name, p, int32(len(t.Partitions)))
	}
	return t, t.Partitions[p], nil
}

// elsewhere decides about a request for topic-p, which broker leader
// leads in epoch: a Local request is refused with NOT_LEADER naming it, a
// request already passed on once is refused as retriable, and any other
// gets nil and is passed on.
func (b *Broker) elsewhere(ctx context.Context, topic string, p, leader, epoch int32) error {
	switch {
	case isLocal(ctx):
		return notLeader(topic, p, leader, epoch)
	case IsForwarded(ctx):
		return leaderNotAvailable("broker %d leads %s-%d; this request was already forwarded", leader, topic, p)
	}
	return nil
}

// batchError is apiError for the requests of clients that name the leader
// epoch they know (Kafka's): an epoch older or newer than the leader's is
// said so, for the client to refresh its metadata, rather than
// LEADER_NOT_AVAILABLE.
func batchError(err error) error {
	switch {
	case errors.Is(err, replica.ErrFencedLeaderEpoch):
		return api.Errorf(api.CodeFencedLeaderEpoch, "%v", err)
	case errors.Is(err, replica.ErrUnknownLeaderEpoch):
		return api.Errorf(api.CodeUnknownLeaderEpoch, "%v", err)
	}
	return apiError(err)
}

// opProduceBatch passes an encoded batch on to its partition's leader.
var opProduceBatch = peer.NewOp[api.ProduceBatchRequest, api.ProduceBatchResult]("core/produce-batch")

// serveProduceBatch is opProduceBatch's handler: the batch, decoded from
// the request, is charged to this broker's budget as a client's would be.
func (b *Broker) serveProduceBatch(ctx context.Context, req api.ProduceBatchRequest) (api.ProduceBatchResult, error) {
	if err := memory.AccountFrom(ctx).Charge(b.memory.Requests, int64(len(req.Batch))); err != nil {
		return api.ProduceBatchResult{}, apiError(err)
	}
	return b.ProduceBatch(ctx, req)
}
