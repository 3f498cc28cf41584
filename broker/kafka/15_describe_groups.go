package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// DescribeGroups v0–6: each group's state, protocol and members. For a
// group of Kafka members, the protocol type and protocol its generation
// chose, and each member's metadata and assignment bytes as its leader
// sent them; for a group the coordinator assigns, its strategy, and each
// member's subscription and assignment encoded as Kafka's consumer
// protocol has them. A group nobody used is Dead with no
// members, as in Kafka; from v6 it is GROUP_ID_NOT_FOUND (KIP-1043).
func init() { register(15, 0, 6, (*Server).describeGroups) }

func (s *Server) describeGroups(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.DescribeGroupsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, name := range r.Groups {
		g := kmsg.NewDescribeGroupsResponseGroup()
		g.Group, g.AuthorizedOperations = name, -2147483648
		d, err := s.opts.Core.DescribeGroup(ctx, api.DescribeGroupRequest{Group: name, WithoutLag: true})
		switch {
		case api.IsCode(err, api.CodeUnknownGroup) && r.Version >= 6:
			g.State, g.ErrorCode, g.ErrorMessage = "Dead", kerr.GroupIDNotFound.Code, errorMessage(err)
		case api.IsCode(err, api.CodeUnknownGroup):
			g.State = "Dead"
		case err != nil:
			g.ErrorCode, g.ErrorMessage = errorCode(err), errorMessage(err)
		case d.ProtocolType != "":
			// Members that assign: their own metadata and the leader's bytes.
			g.State, g.ProtocolType, g.Protocol = d.State, d.ProtocolType, d.Protocol
			for _, m := range d.Members {
				gm := kmsg.NewDescribeGroupsResponseGroupMember()
				gm.MemberID, gm.ClientID, gm.ClientHost = m.ID, m.ClientID, ""
				gm.ProtocolMetadata = append([]byte{}, m.ProtocolMetadata...)
				gm.MemberAssignment = append([]byte{}, m.MemberAssignment...)
				g.Members = append(g.Members, gm)
			}
		default:
			// The coordinator assigns (the HTTP API's members, or nobody
			// joined yet): their subscriptions and assignments as a
			// consumer's.
			g.State, g.ProtocolType, g.Protocol = d.State, api.ConsumerProtocolType, d.AssignmentStrategy
			for _, m := range d.Members {
				gm := kmsg.NewDescribeGroupsResponseGroupMember()
				gm.MemberID, gm.ClientID, gm.ClientHost = m.ID, m.ClientID, ""
				md := kmsg.NewConsumerMemberMetadata()
				md.Topics = m.Topics
				gm.ProtocolMetadata = md.AppendTo(nil)
				gm.MemberAssignment = encodeAssignment(m.Assignment)
				g.Members = append(g.Members, gm)
			}
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp
}
