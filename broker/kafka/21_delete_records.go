package kafka

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// DeleteRecords v0–2 (kafka-delete-records, kadm's DeleteRecords): moves
// each partition's log start offset up to the offset given (-1: the high
// watermark) on its leader, and answers its low watermark once every
// in-sync replica has moved it too, or REQUEST_TIMED_OUT after the
// request's timeout. An offset above the high watermark is
// OFFSET_OUT_OF_RANGE; __consumer_offsets is INVALID_TOPIC_EXCEPTION.
func init() { register(21, 0, 2, (*Server).deleteRecords) }

func (s *Server) deleteRecords(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.DeleteRecordsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteRecordsResponse)
	timeout := time.Duration(r.TimeoutMillis) * time.Millisecond
	for _, t := range r.Topics {
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition, rp.LowWatermark = p.Partition, -1
			res, err := s.opts.Core.DeleteRecords(ctx, api.DeleteRecordsRequest{
				Topic: t.Topic, Partition: p.Partition, Offset: p.Offset, Timeout: timeout})
			if err != nil {
				rp.ErrorCode = errorCode(err)
			} else {
				rp.LowWatermark = res.LowWatermark
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
