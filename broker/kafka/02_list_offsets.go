package kafka

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// ListOffsets v0–11: a partition's log start offset (timestamp -2), high
// watermark (-1), the record with the largest timestamp (-3, v7+), or the
// first record at or after a timestamp, with the leader epoch that wrote
// it (v4+). Without tiered storage the earliest local offset (-4) is the
// log start, and the latest tiered one (-5) is none (-1). v0 answers a list
// of offsets, of which this broker gives the one found.
func init() { register(2, 0, 11, (*Server).listOffsets) }

// Kafka's timestamps of tiered storage (KIP-405).
const (
	earliestLocalTimestamp int64 = -4
	latestTieredTimestamp  int64 = -5
)

func (s *Server) listOffsets(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.ListOffsetsRequest)
	resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
	var wg sync.WaitGroup
	resp.Topics = make([]kmsg.ListOffsetsResponseTopic, len(r.Topics))
	for i := range r.Topics {
		rt := &r.Topics[i]
		t := &resp.Topics[i]
		*t = kmsg.NewListOffsetsResponseTopic()
		t.Topic = rt.Topic
		t.Partitions = make([]kmsg.ListOffsetsResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			p := &t.Partitions[j]
			*p = kmsg.NewListOffsetsResponseTopicPartition()
			p.Partition = rp.Partition
			lreq := api.ListOffsetRequest{Topic: rt.Topic, Partition: rp.Partition, Timestamp: rp.Timestamp,
				CurrentLeaderEpoch: api.NoLeaderEpoch}
			if r.Version >= 4 {
				lreq.CurrentLeaderEpoch = rp.CurrentLeaderEpoch
			}
			switch rp.Timestamp {
			case earliestLocalTimestamp:
				lreq.Timestamp = api.EarliestTimestamp
			case latestTieredTimestamp:
				p.Offset, p.Timestamp = -1, -1
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := s.opts.Core.ListOffset(ctx, lreq)
				p.ErrorCode = errorCode(err)
				if err != nil {
					return
				}
				p.Offset, p.Timestamp, p.LeaderEpoch = res.Offset, res.Timestamp, res.LeaderEpoch
				if r.Version == 0 && rp.MaxNumOffsets > 0 && res.Offset >= 0 {
					p.OldStyleOffsets = []int64{res.Offset}
				}
			}()
		}
	}
	wg.Wait()
	return resp
}
