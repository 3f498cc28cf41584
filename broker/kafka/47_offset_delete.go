package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// OffsetDelete v0: deletes a group's committed offsets of some partitions
// on its coordinator (kafka-consumer-groups --delete-offsets). A partition
// of a topic a member of the group consumes keeps its offset and answers
// GROUP_SUBSCRIBED_TO_TOPIC; an unknown group is GROUP_ID_NOT_FOUND for
// the whole request. Offsets of a topic that no longer exists can be
// deleted too.
func init() { register(47, 0, 0, (*Server).offsetDelete) }

func (s *Server) offsetDelete(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.OffsetDeleteRequest)
	resp := r.ResponseKind().(*kmsg.OffsetDeleteResponse)
	dreq := api.DeleteOffsetsRequest{Group: r.Group}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			dreq.Partitions = append(dreq.Partitions, api.TopicPartition{Topic: t.Topic, Partition: p.Partition})
		}
	}
	deleted, err := s.opts.Core.DeleteOffsets(ctx, dreq)
	if err != nil {
		resp.ErrorCode = errorCode(err)
		return resp
	}
	i := 0
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			if i < len(deleted) && deleted[i].Err != nil {
				rp.ErrorCode = errorCode(deleted[i].Err)
			}
			i++
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
