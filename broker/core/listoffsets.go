package core

import (
	"context"
	"errors"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/replica"
)

// ListOffset finds an offset of one partition on its leader (Kafka's
// ListOffsets): the log start offset (api.EarliestTimestamp), the high
// watermark (api.LatestTimestamp), or the first record a consumer may
// read whose timestamp is at or after Timestamp (-1 when there is none).
// The record's timestamp and the epoch that wrote it are not kept by the
// lookup and are answered -1, which Kafka's clients read as unknown.
// MaxTimestamp is not supported (INVALID_ARGUMENT).
func (b *Broker) ListOffset(ctx context.Context, req api.ListOffsetRequest) (api.ListOffsetResult, error) {
	return onLeader(ctx, b, req.Topic, req.Partition, opListOffset, req, func(ctx context.Context) (api.ListOffsetResult, error) {
		o, err := b.replicas.LeaderOffsets(ctx, req.Topic, req.Partition, req.CurrentLeaderEpoch)
		if err != nil {
			return api.ListOffsetResult{}, err
		}
		res := api.ListOffsetResult{Timestamp: -1, LeaderEpoch: -1}
		switch {
		case req.Timestamp == api.EarliestTimestamp:
			res.Offset = o.LogStartOffset
		case req.Timestamp == api.LatestTimestamp:
			if res.Offset, err = latestOffset(o); err != nil {
				return api.ListOffsetResult{}, err
			}
		case req.Timestamp < 0:
			return api.ListOffsetResult{}, api.Errorf(api.CodeInvalidArgument, "timestamp %d is not supported", req.Timestamp)
		default:
			off, err := b.replicas.OffsetForTimestamp(req.Topic, req.Partition, req.Timestamp)
			if err != nil {
				return api.ListOffsetResult{}, err
			}
			res.Offset = off
			if off >= o.HighWatermark {
				res.Offset = -1
			}
		}
		return res, nil
	})
}

// latestOffset is a partition's latest offset, its high watermark. A new
// leader learns the high watermark from its followers' next fetches; until
// it reaches the start of the leader's own epoch it may be below records
// its predecessor acknowledged, and a consumer reading "to the end" would
// stop short, so it is OFFSET_NOT_AVAILABLE (retriable) meanwhile, as in
// Kafka (KIP-207).
func latestOffset(o replica.Offsets) (int64, error) {
	if o.HighWatermark < o.EpochStartOffset {
		return 0, api.Errorf(api.CodeOffsetNotAvailable,
			"the leader's high watermark %d has not reached the start of its epoch %d at %d yet",
			o.HighWatermark, o.LeaderEpoch, o.EpochStartOffset)
	}
	return o.HighWatermark, nil
}

// EpochEndOffset answers, on the partition's leader, where a leader epoch
// ended in its log (Kafka's OffsetForLeaderEpoch for consumers).
func (b *Broker) EpochEndOffset(ctx context.Context, req api.EpochEndOffsetRequest) (api.EpochEndOffsetResult, error) {
	return onLeader(ctx, b, req.Topic, req.Partition, opEpochEndOffset, req, func(ctx context.Context) (api.EpochEndOffsetResult, error) {
		epoch, end, err := b.replicas.EpochEndOffset(ctx, req.Topic, req.Partition, req.LeaderEpoch, req.CurrentLeaderEpoch)
		return api.EpochEndOffsetResult{LeaderEpoch: epoch, EndOffset: end}, err
	})
}

var (
	opListOffset     = peer.NewOp[api.ListOffsetRequest, api.ListOffsetResult]("core/list-offset")
	opEpochEndOffset = peer.NewOp[api.EpochEndOffsetRequest, api.EpochEndOffsetResult]("core/epoch-end-offset")
)

// onLeader runs a request about topic-p on the partition's leader: local
// when this broker leads it, passed on once with op otherwise, refused
// with NOT_LEADER when ctx is Local.
func onLeader[Req, Resp any](ctx context.Context, b *Broker, topic string, p int32, op peer.Op[Req, Resp], req Req,
	local func(context.Context) (Resp, error)) (Resp, error) {
	var zero Resp
	t, part, err := b.batchPartition(ctx, topic, "", p)
	if err != nil {
		return zero, err
	}
	if leader := int32(part.Leader); leader != b.id && leader >= 0 {
		if err := b.elsewhere(ctx, topic, p, leader, int32(part.LeaderEpoch)); err != nil {
			return zero, err
		}
		return forward(ctx, b, leader, int32(part.LeaderEpoch), op, req, api.CodeLeaderNotAvailable)
	}
	lctx := replica.WithTopicID(ctx, t.ID)
	resp, err := local(lctx)
	if err != nil && b.lagging(err, topic, p) && b.awaitLeader(ctx, topic, p) {
		resp, err = local(lctx)
	}
	var nl *replica.NotLeaderError
	if errors.As(err, &nl) && nl.Leader >= 0 && nl.Leader != b.id {
		if err := b.elsewhere(ctx, topic, p, nl.Leader, nl.Epoch); err != nil {
			return zero, err
		}
		return forward(ctx, b, nl.Leader, nl.Epoch, op, req, api.CodeLeaderNotAvailable)
	}
	return resp, batchError(err)
}
