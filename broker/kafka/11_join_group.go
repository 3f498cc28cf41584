package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// JoinGroup v0–9: the classic group protocol with client-side assignors.
// The member's protocol type and protocols (name and metadata, preferred
// first) go to the coordinator, which keeps them, picks the protocol every
// member supports (Kafka's vote) and answers it; the leader gets every
// member's metadata for that protocol, runs its assignor and sends the
// assignments in its SyncGroup. For the consumer protocol each protocol's
// metadata is also read as a subscription, so the group's topics show in
// the HTTP API and kairoctl. A member that shares no protocol with the
// group, or joins a group of the HTTP API's consumers, is answered
// INCONSISTENT_GROUP_PROTOCOL. A new member gets its id at once (no
// MEMBER_ID_REQUIRED round trip), and a group instance id (static
// membership) is not kept.
func init() { register(11, 0, 9, (*Server).joinGroup) }

func (s *Server) joinGroup(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.JoinGroupRequest)
	resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.Generation = -1
	if r.ProtocolType == "" || len(r.Protocols) == 0 {
		resp.ErrorCode, resp.MemberID = kerr.InconsistentGroupProtocol.Code, r.MemberID
		return resp
	}
	rebalance := r.RebalanceTimeoutMillis
	if r.Version == 0 {
		rebalance = r.SessionTimeoutMillis
	}
	jr := api.JoinGroupRequest{Group: r.Group, MemberID: r.MemberID, SessionTimeoutMs: int64(r.SessionTimeoutMillis),
		RebalanceTimeoutMs: int64(rebalance), ClientID: req.clientID, ProtocolType: r.ProtocolType}
	for _, p := range r.Protocols {
		gp := api.GroupProtocol{Name: p.Name, Metadata: p.Metadata}
		if r.ProtocolType == api.ConsumerProtocolType {
			var meta kmsg.ConsumerMemberMetadata
			if meta.ReadFrom(p.Metadata) == nil {
				gp.Topics = meta.Topics
			}
		}
		jr.Protocols = append(jr.Protocols, gp)
	}
	res, err := s.opts.Core.JoinGroup(ctx, jr)
	if err != nil {
		resp.ErrorCode, resp.MemberID = errorCode(err), r.MemberID
		return resp
	}
	resp.Generation, resp.LeaderID, resp.MemberID = res.Generation, res.Leader, res.MemberID
	resp.Protocol, resp.ProtocolType = kmsg.StringPtr(res.Protocol), kmsg.StringPtr(res.ProtocolType)
	if res.Leader == res.MemberID {
		for _, m := range res.Members {
			jm := kmsg.NewJoinGroupResponseMember()
			jm.MemberID, jm.ProtocolMetadata = m.ID, m.Metadata
			if jm.ProtocolMetadata == nil {
				jm.ProtocolMetadata = []byte{}
			}
			resp.Members = append(resp.Members, jm)
		}
	}
	return resp
}
