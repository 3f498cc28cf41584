package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// SyncGroup v0–5: the member's assignment in its generation, as the
// coordinator computed it (see JoinGroup), encoded as a consumer's
// assignment. The assignments a leader sends are not used.
func init() { register(14, 0, 5, (*Server).syncGroup) }

func (s *Server) syncGroup(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.SyncGroupRequest)
	resp := r.ResponseKind().(*kmsg.SyncGroupResponse)
	res, err := s.opts.Core.SyncGroup(ctx, api.MemberGeneration{Group: r.Group, MemberID: r.MemberID, Generation: r.Generation})
	if err != nil {
		resp.ErrorCode = errorCode(err)
		resp.MemberAssignment = []byte{}
		return resp
	}
	resp.ProtocolType, resp.Protocol = r.ProtocolType, r.Protocol
	resp.MemberAssignment = encodeAssignment(res.Assignment)
	return resp
}

// encodeAssignment is a consumer's assignment as Kafka's consumer protocol
// encodes it.
func encodeAssignment(tps []api.TopicPartitions) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	for _, tp := range tps {
		t := kmsg.NewConsumerMemberAssignmentTopic()
		t.Topic, t.Partitions = tp.Topic, tp.Partitions
		a.Topics = append(a.Topics, t)
	}
	return a.AppendTo(nil)
}
