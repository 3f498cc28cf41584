package core

import (
	"context"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
	"github.com/kairolog/kairolog/broker/peer"
)

// DeleteRecords moves one partition's log start offset up to req.Offset
// on its leader (Kafka's DeleteRecords), or to the high watermark for
// api.HighWatermarkOffset, and answers the log start offset afterwards.
// An offset above the high watermark, or below -1, is OFFSET_OUT_OF_RANGE:
// only records every in-sync replica holds may go, so no leader change
// brings them back; the answer waits until every in-sync replica has
// deleted them too (REQUEST_TIMED_OUT after req.Timeout, the leader's
// deletion done). An offset at or below the log start changes nothing.
// The brokers' own topics are INTERNAL_TOPIC, as in Kafka: their
// coordinators delete what they no longer need themselves.
func (b *Broker) DeleteRecords(ctx context.Context, req api.DeleteRecordsRequest) (api.DeleteRecordsResult, error) {
	t, _, err := b.batchPartition(ctx, req.Topic, "", req.Partition)
	if err != nil {
		return api.DeleteRecordsResult{}, err
	}
	if err := metadata.RefuseInternal(t, "have records deleted"); err != nil {
		return api.DeleteRecordsResult{}, batchError(err)
	}
	return onLeader(ctx, b, req.Topic, req.Partition, opDeleteRecords, req, func(ctx context.Context) (api.DeleteRecordsResult, error) {
		offset := req.Offset
		if offset == api.HighWatermarkOffset {
			o, err := b.replicas.LeaderOffsets(ctx, req.Topic, req.Partition, -1)
			if err != nil {
				return api.DeleteRecordsResult{}, err
			}
			offset = o.HighWatermark
		}
		timeout := req.Timeout
		if timeout <= 0 {
			timeout = api.DefaultDeleteRecordsTimeout
		}
		start, err := b.replicas.DeleteRecordsInSync(ctx, req.Topic, req.Partition, offset, timeout)
		return api.DeleteRecordsResult{LowWatermark: start}, err
	})
}

var opDeleteRecords = peer.NewOp[api.DeleteRecordsRequest, api.DeleteRecordsResult]("core/delete-records")
