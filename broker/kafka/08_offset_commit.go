package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// OffsetCommit v0–9: commits a group's offsets on its coordinator, all
// or none, fenced by the member and generation a group member sends
// (generation -1 and no member: a standalone consumer's unfenced commit).
// Every partition carries the commit's error. The commit's retention time
// and the offsets' leader epochs are not kept. v10 names topics by id: a
// commit naming an unknown id is UNKNOWN_TOPIC_ID, and commits nothing.
func init() { register(8, 0, 10, (*Server).offsetCommit) }

func (s *Server) offsetCommit(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.OffsetCommitRequest)
	resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
	creq := api.CommitOffsetsRequest{Group: r.Group, MemberID: r.MemberID, Generation: r.Generation}
	if r.Version == 0 {
		creq.MemberID, creq.Generation = "", api.NoGeneration
	}
	var names map[[16]byte]string
	if r.Version >= 10 {
		names = s.topicNamesByID(ctx)
	}
	unknownID := false
	for _, t := range r.Topics {
		topic := t.Topic
		if r.Version >= 10 {
			var ok bool
			topic, ok = names[t.TopicID]
			unknownID = unknownID || !ok
		}
		for _, p := range t.Partitions {
			c := api.OffsetCommit{Topic: topic, Partition: p.Partition, Offset: p.Offset}
			if p.Metadata != nil {
				c.Metadata = *p.Metadata
			}
			creq.Offsets = append(creq.Offsets, c)
		}
	}
	var code int16
	if unknownID {
		code = kerr.UnknownTopicID.Code
	} else {
		code = errorCode(s.opts.Core.CommitOffsets(ctx, creq))
	}
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
