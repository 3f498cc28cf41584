package kafka

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// OffsetForLeaderEpoch v0–4: where a leader epoch ended in a partition's
// log (the largest epoch at or below the one asked, v1+, and the offset
// after its last record). A consumer asks after a leader change, to learn
// whether the records it read were truncated away (KIP-320).
func init() { register(23, 0, 4, (*Server).offsetForLeaderEpoch) }

func (s *Server) offsetForLeaderEpoch(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.OffsetForLeaderEpochRequest)
	resp := r.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	var wg sync.WaitGroup
	resp.Topics = make([]kmsg.OffsetForLeaderEpochResponseTopic, len(r.Topics))
	for i := range r.Topics {
		rt := &r.Topics[i]
		t := &resp.Topics[i]
		*t = kmsg.NewOffsetForLeaderEpochResponseTopic()
		t.Topic = rt.Topic
		t.Partitions = make([]kmsg.OffsetForLeaderEpochResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			p := &t.Partitions[j]
			*p = kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			p.Partition = rp.Partition
			ereq := api.EpochEndOffsetRequest{Topic: rt.Topic, Partition: rp.Partition, LeaderEpoch: rp.LeaderEpoch,
				CurrentLeaderEpoch: api.NoLeaderEpoch}
			if r.Version >= 2 {
				ereq.CurrentLeaderEpoch = rp.CurrentLeaderEpoch
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := s.opts.Core.EpochEndOffset(ctx, ereq)
				p.ErrorCode = errorCode(err)
				p.LeaderEpoch, p.EndOffset = res.LeaderEpoch, res.EndOffset
				if err != nil {
					p.LeaderEpoch, p.EndOffset = -1, -1
				}
			}()
		}
	}
	wg.Wait()
	return resp
}
