package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// JoinGroup v0–9, for consumers (protocol type "consumer"): the member's
// subscription is read from its first protocol's metadata and the member
// joins the group's next generation on the coordinator, the same group the
// HTTP API and kairoctl show. The coordinator assigns the partitions itself
// with the group's assignment strategy, as for HTTP consumers: the leader
// gets every member's subscription and runs its assignor as the protocol
// has it, but SyncGroup hands out the coordinator's assignment, not the
// leader's. The protocol answered is the member's first, the one it
// prefers. A new member gets its id at once (no MEMBER_ID_REQUIRED round
// trip), and a group instance id (static membership) is not kept.
func init() { register(11, 0, 9, (*Server).joinGroup) }

// consumerProtocol is the protocol type of Kafka's consumers.
const consumerProtocol = "consumer"

func (s *Server) joinGroup(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.JoinGroupRequest)
	resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.Generation = -1
	if r.ProtocolType != consumerProtocol || len(r.Protocols) == 0 {
		resp.ErrorCode = kerr.InconsistentGroupProtocol.Code
		return resp
	}
	var meta kmsg.ConsumerMemberMetadata
	if err := meta.ReadFrom(r.Protocols[0].Metadata); err != nil {
		resp.ErrorCode = kerr.InconsistentGroupProtocol.Code
		return resp
	}
	rebalance := r.RebalanceTimeoutMillis
	if r.Version == 0 {
		rebalance = r.SessionTimeoutMillis
	}
	res, err := s.opts.Core.JoinGroup(ctx, api.JoinGroupRequest{Group: r.Group, MemberID: r.MemberID,
		Topics: meta.Topics, SessionTimeoutMs: int64(r.SessionTimeoutMillis), RebalanceTimeoutMs: int64(rebalance),
		ClientID: req.clientID})
	if err != nil {
		resp.ErrorCode, resp.MemberID = errorCode(err), r.MemberID
		return resp
	}
	protocol := r.Protocols[0].Name
	resp.Generation, resp.LeaderID, resp.MemberID = res.Generation, res.Leader, res.MemberID
	resp.Protocol, resp.ProtocolType = &protocol, kmsg.StringPtr(consumerProtocol)
	if res.Leader == res.MemberID {
		for _, m := range res.Members {
			jm := kmsg.NewJoinGroupResponseMember()
			jm.MemberID = m.ID
			md := kmsg.NewConsumerMemberMetadata()
			md.Topics = m.Topics
			jm.ProtocolMetadata = md.AppendTo(nil)
			resp.Members = append(resp.Members, jm)
		}
	}
	return resp
}
