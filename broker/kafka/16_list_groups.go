package kafka

import (
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// ListGroups v0–5: the groups this broker coordinates, as a Kafka broker
// answers (Kafka's clients ask every broker and concatenate the answers,
// so a group listed by every broker would be listed three times); on the
// gateway, which names itself the coordinator of every group, every
// coordinator's groups. Filtered by state (v4+, case-insensitive as in
// Kafka) and type (v5+). On the gateway a broker that did not answer
// leaves its groups out.
func init() { register(16, 0, 5, (*Server).listGroups) }

func (s *Server) listGroups(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.ListGroupsRequest)
	resp := r.ResponseKind().(*kmsg.ListGroupsResponse)
	list, err := s.opts.Core.ListGroups(ctx)
	if err != nil {
		resp.ErrorCode = errorCode(err)
		return resp
	}
	if len(r.TypesFilter) > 0 && !slices.ContainsFunc(r.TypesFilter, func(t string) bool { return strings.EqualFold(t, "classic") }) {
		return resp
	}
	for _, g := range list.Groups {
		if len(r.StatesFilter) > 0 && !slices.ContainsFunc(r.StatesFilter, func(st string) bool { return strings.EqualFold(st, g.State) }) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = g.Group, api.ConsumerProtocolType, g.State, "classic"
		resp.Groups = append(resp.Groups, lg)
	}
	return resp
}
