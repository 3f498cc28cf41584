package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// DeleteGroups v0–3: deletes empty groups and their committed offsets;
// a group with members is NON_EMPTY_GROUP, an unknown one
// GROUP_ID_NOT_FOUND.
func init() { register(42, 0, 3, (*Server).deleteGroups) }

func (s *Server) deleteGroups(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.DeleteGroupsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, name := range r.Groups {
		g := kmsg.NewDeleteGroupsResponseGroup()
		g.Group = name
		g.ErrorCode = errorCode(s.opts.Core.DeleteGroup(ctx, api.DeleteGroupRequest{Group: name}))
		resp.Groups = append(resp.Groups, g)
	}
	return resp
}
