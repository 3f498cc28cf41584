package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// LeaveGroup v0–5: one member (v0–2) or several (v3+) leave their group,
// which rebalances.
func init() { register(13, 0, 5, (*Server).leaveGroup) }

func (s *Server) leaveGroup(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.LeaveGroupRequest)
	resp := r.ResponseKind().(*kmsg.LeaveGroupResponse)
	if r.Version < 3 {
		resp.ErrorCode = errorCode(s.opts.Core.LeaveGroup(ctx, api.LeaveGroupRequest{Group: r.Group, MemberID: r.MemberID}))
		return resp
	}
	for _, m := range r.Members {
		lm := kmsg.NewLeaveGroupResponseMember()
		lm.MemberID, lm.InstanceID = m.MemberID, m.InstanceID
		lm.ErrorCode = errorCode(s.opts.Core.LeaveGroup(ctx, api.LeaveGroupRequest{Group: r.Group, MemberID: m.MemberID}))
		resp.Members = append(resp.Members, lm)
	}
	return resp
}
