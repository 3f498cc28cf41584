package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// DescribeGroups v0–5: each group's state, assignment strategy and
// members, with each member's subscription and assignment encoded as
// Kafka's consumer protocol has them. A group nobody used is Dead with no
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
		default:
			g.State, g.ProtocolType, g.Protocol = d.State, consumerProtocol, d.AssignmentStrategy
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
