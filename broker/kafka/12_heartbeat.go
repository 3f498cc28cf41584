package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// Heartbeat v0–4: keeps a member's session alive; REBALANCE_IN_PROGRESS
// tells it to join again.
func init() { register(12, 0, 4, (*Server).heartbeat) }

func (s *Server) heartbeat(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.HeartbeatRequest)
	resp := r.ResponseKind().(*kmsg.HeartbeatResponse)
	err := s.opts.Core.Heartbeat(ctx, api.MemberGeneration{Group: r.Group, MemberID: r.MemberID, Generation: r.Generation})
	resp.ErrorCode = errorCode(err)
	return resp
}
