package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// SyncGroup v0–5: the leader sends every member's assignment, which the
// coordinator stores (in the group's journal, so that it survives a
// coordinator failover) and hands out; every member, the leader included,
// gets the bytes the leader assigned it, empty when the leader left it
// out. A member that syncs before its leader waits for it, as in Kafka.
// Consumer-protocol assignments are also read as topics and partitions,
// which the HTTP API, kairoctl and the ConsumerGroup resource show. From
// v5 a protocol type or name other than the group's is
// INCONSISTENT_GROUP_PROTOCOL.
func init() { register(14, 0, 5, (*Server).syncGroup) }

func (s *Server) syncGroup(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.SyncGroupRequest)
	resp := r.ResponseKind().(*kmsg.SyncGroupResponse)
	sr := api.SyncGroupRequest{Group: r.Group, MemberID: r.MemberID, Generation: r.Generation}
	if r.ProtocolType != nil {
		sr.ProtocolType = *r.ProtocolType
	}
	if r.Protocol != nil {
		sr.Protocol = *r.Protocol
	}
	for _, a := range r.GroupAssignment {
		ma := api.MemberAssignment{MemberID: a.MemberID, Assignment: a.MemberAssignment}
		// Only the coordinator knows the group's protocol type (a v0–4
		// request does not name it): it keeps these partitions for a
		// consumer group alone.
		var ca kmsg.ConsumerMemberAssignment
		if ca.ReadFrom(a.MemberAssignment) == nil {
			for _, t := range ca.Topics {
				ma.Topics = append(ma.Topics, api.TopicPartitions{Topic: t.Topic, Partitions: t.Partitions})
			}
		}
		sr.Assignments = append(sr.Assignments, ma)
	}
	res, err := s.opts.Core.SyncGroup(ctx, sr)
	if err != nil {
		resp.ErrorCode = errorCode(err)
		resp.MemberAssignment = []byte{}
		return resp
	}
	if res.ProtocolType == "" {
		// A group the coordinator assigns (the HTTP API's members).
		resp.ProtocolType, resp.Protocol = r.ProtocolType, r.Protocol
		resp.MemberAssignment = encodeAssignment(res.Assignment)
		return resp
	}
	resp.ProtocolType, resp.Protocol = kmsg.StringPtr(res.ProtocolType), kmsg.StringPtr(res.Protocol)
	resp.MemberAssignment = append([]byte{}, res.MemberAssignment...)
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
