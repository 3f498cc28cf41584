package core

import (
	"context"
	"time"

	"github.com/kairolog/kairolog/broker/peer"
)

// opPartitions answers the offsets and sizes of many partitions this
// broker hosts in one request: topic describe and /metadata ask each
// leading broker once for every partition it leads, however many topics
// they span.
var opPartitions = peer.NewOp[partitionsRequest, partitionsResponse]("broker/partitions")

// peerPartitionsTimeout bounds the wait for one broker's answer, so that a
// broker that stopped answering leaves -1 in its partitions' offsets
// instead of stalling the whole description.
const peerPartitionsTimeout = 3 * time.Second

type partitionRef struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

type partitionsRequest struct {
	Partitions []partitionRef `json:"partitions"`
}

// partitionSizes is one hosted replica's offsets and size, as describe
// shows them.
type partitionSizes struct {
	Topic          string `json:"topic"`
	Partition      int32  `json:"partition"`
	HighWatermark  int64  `json:"high_watermark"`
	LogEndOffset   int64  `json:"log_end_offset"`
	LogStartOffset int64  `json:"log_start_offset"`
	SizeBytes      int64  `json:"size_bytes"`
}

type partitionsResponse struct {
	Partitions []partitionSizes `json:"partitions"`
}

// peerPartitions asks broker id for the partitions of req.
func (b *Broker) peerPartitions(ctx context.Context, id int32, req partitionsRequest) (map[partitionRef]partitionSizes, error) {
	addr, err := b.peerAddress(id)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, peerPartitionsTimeout)
	defer cancel()
	resp, err := peer.Call(ctx, b.peerClient, addr, opPartitions, req)
	if err != nil {
		return nil, err
	}
	out := make(map[partitionRef]partitionSizes, len(resp.Partitions))
	for _, p := range resp.Partitions {
		out[partitionRef{p.Topic, p.Partition}] = p
	}
	return out, nil
}

// servePartitions is the handler of opPartitions: the requested
// partitions this broker hosts (others are left out).
func (b *Broker) servePartitions(_ context.Context, req partitionsRequest) (partitionsResponse, error) {
	out := partitionsResponse{Partitions: make([]partitionSizes, 0, len(req.Partitions))}
	for _, p := range req.Partitions {
		info, err := b.replicas.PartitionInfo(p.Topic, p.Partition)
		if err != nil {
			continue
		}
		out.Partitions = append(out.Partitions, partitionSizes{Topic: p.Topic, Partition: p.Partition,
			HighWatermark: info.HighWatermark, LogEndOffset: info.LogEndOffset,
			LogStartOffset: info.LogStartOffset, SizeBytes: info.SizeBytes})
	}
	return out, nil
}
