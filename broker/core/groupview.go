package core

import (
	"context"
	"fmt"
	"time"

	"github.com/kairolog/kairolog/broker/group"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/replica"
)

// partitionOffsets are a partition's bounds as its leader sees them.
type partitionOffsets struct {
	LogStartOffset int64 `json:"log_start_offset"`
	HighWatermark  int64 `json:"high_watermark"`
	LogEndOffset   int64 `json:"log_end_offset"`
	// OffsetForTimestamp is set when the request asked for a timestamp.
	OffsetForTimestamp *int64 `json:"offset_for_timestamp,omitempty"`
}

// offsetsRequest asks a partition's leader for its bounds, and the offset
// for a timestamp when Timestamp is set.
type offsetsRequest struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Timestamp *int64 `json:"timestamp,omitempty"`
}

// opOffsets answers partitionOffsets for partitions this broker leads; a
// coordinator on another broker uses it for lag and resets.
var opOffsets = peer.NewOp[offsetsRequest, partitionOffsets]("broker/offsets")

// groupView is the group.Partitions the coordinators read: partition counts
// from the metadata, offsets from each partition's leader.
type groupView struct{ b *Broker }

func (b *Broker) groupView() group.Partitions { return groupView{b} }

func (v groupView) PartitionCount(topic string) (int32, bool) {
	t := v.b.image().Topic(topic)
	if t == nil {
		return 0, false
	}
	return int32(len(t.Partitions)), true
}

// groupViewTimeout bounds one read of a partition's offsets from its
// leader, within the request's own deadline.
const groupViewTimeout = 5 * time.Second

func (v groupView) offsets(ctx context.Context, topic string, p int32, ts *int64) (partitionOffsets, error) {
	ctx, cancel := context.WithTimeout(ctx, groupViewTimeout)
	defer cancel()
	return v.b.partitionOffsets(ctx, topic, p, ts)
}

func (v groupView) Bounds(ctx context.Context, topic string, p int32) (group.Bounds, error) {
	o, err := v.offsets(ctx, topic, p, nil)
	return group.Bounds{LogStartOffset: o.LogStartOffset, HighWatermark: o.HighWatermark, LogEndOffset: o.LogEndOffset}, err
}

func (v groupView) OffsetForTimestamp(ctx context.Context, topic string, p int32, ts int64) (int64, error) {
	o, err := v.offsets(ctx, topic, p, &ts)
	if err != nil {
		return 0, err
	}
	return *o.OffsetForTimestamp, nil
}

// partitionOffsets reads a partition's bounds from its leader: locally, or
// over the peer transport from the broker that leads it (opOffsets).
func (b *Broker) partitionOffsets(ctx context.Context, topic string, p int32, ts *int64) (partitionOffsets, error) {
	t := b.image().Topic(topic)
	if t == nil {
		return partitionOffsets{}, fmt.Errorf("%w: %q", group.ErrUnknownTopic, topic)
	}
	if p < 0 || int(p) >= len(t.Partitions) {
		return partitionOffsets{}, fmt.Errorf("%w: %s-%d", group.ErrUnknownPartition, topic, p)
	}
	leader := int32(t.Partitions[p].Leader)
	if leader == b.id || leader < 0 {
		return b.localOffsets(ctx, topic, p, ts)
	}
	addr, err := b.peerAddress(leader)
	if err != nil {
		return partitionOffsets{}, err
	}
	out, err := peer.Call(ctx, b.peerClient, addr, opOffsets, offsetsRequest{Topic: topic, Partition: p, Timestamp: ts})
	if err == nil && ts != nil && out.OffsetForTimestamp == nil {
		err = fmt.Errorf("broker %d did not answer the offset for a timestamp", leader)
	}
	return out, err
}

func (b *Broker) localOffsets(ctx context.Context, topic string, p int32, ts *int64) (partitionOffsets, error) {
	info, err := b.replicas.PartitionInfo(topic, p)
	if err != nil {
		return partitionOffsets{}, err
	}
	if !info.IsLeader {
		return partitionOffsets{}, &replica.NotLeaderError{Topic: topic, Partition: p, Leader: info.Leader, Epoch: info.LeaderEpoch}
	}
	out := partitionOffsets{LogStartOffset: info.LogStartOffset, HighWatermark: info.HighWatermark, LogEndOffset: info.LogEndOffset}
	if ts != nil {
		// The leader's time index, capped at the high watermark.
		off, err := b.replicas.OffsetForTimestamp(topic, p, *ts)
		if err != nil {
			return partitionOffsets{}, err
		}
		out.OffsetForTimestamp = &off
	}
	return out, nil
}

// serveOffsets is the handler of opOffsets.
func (b *Broker) serveOffsets(ctx context.Context, req offsetsRequest) (partitionOffsets, error) {
	out, err := b.localOffsets(ctx, req.Topic, req.Partition, req.Timestamp)
	return out, peerAnswer(err)
}
