package httpapi

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/kairolog/kairolog/broker/api"
)

// The generation protocol: join, sync, heartbeat, leave and fenced
// commits of the group in the path.

func (s *Server) groupRoutes() {
	s.handle("POST /groups/{group}/join", "join_group", kindAdmin, endpoint(s, fromBody[api.JoinGroupRequest, joinBody], s.b.JoinGroup, result))
	s.handle("POST /groups/{group}/sync", "sync_group", kindAdmin, endpoint(s, fromBody[api.MemberGeneration, generationBody], s.syncGroup, result))
	s.handle("POST /groups/{group}/heartbeat", "heartbeat", kindData, endpoint(s, fromBody[api.MemberGeneration, generationBody],
		noResult(s.b.Heartbeat), replyStatus[api.MemberGeneration]("ok")))
	s.handle("POST /groups/{group}/leave", "leave_group", kindAdmin, endpoint(s, fromBody[api.LeaveGroupRequest, leaveBody],
		noResult(s.b.LeaveGroup), replyStatus[api.LeaveGroupRequest]("left")))
	s.handle("POST /groups/{group}/offsets", "commit_offsets", kindData, endpoint(s, fromBody[api.CommitOffsetsRequest, commitBody],
		noResult(s.b.CommitOffsets), replyStatus[api.CommitOffsetsRequest]("committed")))
	s.handle("GET /groups/{group}/offsets", "group_offsets", kindAdmin, endpoint(s, readGroupOffsets, s.b.Offsets,
		ok(func(req api.OffsetsRequest, offs []api.OffsetCommit) any {
			return struct {
				Group   string             `json:"group"`
				Offsets []api.OffsetCommit `json:"offsets"`
			}{req.Group, nonNil(offs)}
		})))
	s.groupAdminRoutes()
}

// syncGroup answers a member's assignment. The HTTP API's members are
// assigned by the coordinator: they send no assignments.
func (s *Server) syncGroup(ctx context.Context, req api.MemberGeneration) (api.SyncGroupResult, error) {
	return s.b.SyncGroup(ctx, api.SyncGroupRequest{Group: req.Group, MemberID: req.MemberID, Generation: req.Generation})
}

// reservedGroups are the path segments of the original group API; a group by
// one of these names cannot be addressed as /groups/{g}.
var reservedGroups = []string{"assign", "rebalance", "cleanup-and-rebalance", "assignments",
	"join", "leave", "heartbeat", "members", "stale", "remove-stale"}

// groupName reads {group}: METHOD_NOT_ALLOWED when it is a path of the
// original group API.
func groupName(r *http.Request) (string, error) {
	g := strings.TrimSpace(r.PathValue("group"))
	if g == "" {
		return "", required("group")
	}
	if slices.Contains(reservedGroups, g) {
		return "", api.Errorf(api.CodeMethodNotAllowed, "method %s is not allowed on %s", r.Method, r.URL.Path)
	}
	return g, nil
}

// groupInPath is embedded in the bodies of /groups/{group}/… routes: the
// group in the path is checked before the body is read.
type groupInPath struct{}

func (groupInPath) checkPath(r *http.Request) error {
	_, err := groupName(r)
	return err
}

// replyStatus answers {"status": status}.
func replyStatus[Req any](status string) func(Req, struct{}) (int, any) {
	return func(Req, struct{}) (int, any) { return http.StatusOK, withStatus{status: status} }
}

type joinBody struct {
	groupInPath
	MemberID           *string   `json:"member_id"`
	Topics             *[]string `json:"topics"`
	SessionTimeoutMs   *int64    `json:"session_timeout_ms"`
	RebalanceTimeoutMs *int64    `json:"rebalance_timeout_ms"`
	ClientID           *string   `json:"client_id"`
}

func (b *joinBody) request(r *http.Request) (api.JoinGroupRequest, error) {
	g, err := groupName(r)
	if err != nil {
		return api.JoinGroupRequest{}, err
	}
	if b.Topics == nil || len(*b.Topics) == 0 {
		return api.JoinGroupRequest{}, required("topics")
	}
	req := api.JoinGroupRequest{Group: g, MemberID: trimmed(b.MemberID), ClientID: trimmed(b.ClientID)}
	for i, t := range *b.Topics {
		t = strings.TrimSpace(t)
		if t == "" {
			return req, api.Errorf(api.CodeInvalidArgument, "topics[%d] is empty", i)
		}
		if !slices.Contains(req.Topics, t) {
			req.Topics = append(req.Topics, t)
		}
	}
	for _, f := range []struct {
		name string
		v    *int64
		dst  *int64
	}{{"session_timeout_ms", b.SessionTimeoutMs, &req.SessionTimeoutMs}, {"rebalance_timeout_ms", b.RebalanceTimeoutMs, &req.RebalanceTimeoutMs}} {
		if f.v == nil {
			continue
		}
		if *f.v < 1 || *f.v > maxTimeoutMs {
			return req, api.Errorf(api.CodeInvalidArgument, "%s must be between 1 and %d, got %d", f.name, int64(maxTimeoutMs), *f.v)
		}
		*f.dst = *f.v
	}
	return req, nil
}

type generationBody struct {
	groupInPath
	MemberID   *string `json:"member_id"`
	Generation *int32  `json:"generation"`
}

func (b *generationBody) request(r *http.Request) (api.MemberGeneration, error) {
	g, err := groupName(r)
	if err != nil {
		return api.MemberGeneration{}, err
	}
	m := trimmed(b.MemberID)
	if m == "" {
		return api.MemberGeneration{}, required("member_id")
	}
	if b.Generation == nil {
		return api.MemberGeneration{}, required("generation")
	}
	return api.MemberGeneration{Group: g, MemberID: m, Generation: *b.Generation}, nil
}

type leaveBody struct {
	groupInPath
	MemberID *string `json:"member_id"`
}

func (b *leaveBody) request(r *http.Request) (api.LeaveGroupRequest, error) {
	g, err := groupName(r)
	if err != nil {
		return api.LeaveGroupRequest{}, err
	}
	m := trimmed(b.MemberID)
	if m == "" {
		return api.LeaveGroupRequest{}, required("member_id")
	}
	return api.LeaveGroupRequest{Group: g, MemberID: m}, nil
}

type commitBody struct {
	generationBody
	Offsets *[]struct {
		Topic     *string `json:"topic"`
		Partition *int32  `json:"partition"`
		Offset    *int64  `json:"offset"`
		Metadata  string  `json:"metadata"`
	} `json:"offsets"`
}

func (b *commitBody) request(r *http.Request) (api.CommitOffsetsRequest, error) {
	mg, err := b.generationBody.request(r)
	if err != nil {
		return api.CommitOffsetsRequest{}, err
	}
	if b.Offsets == nil {
		return api.CommitOffsetsRequest{}, required("offsets")
	}
	req := api.CommitOffsetsRequest{Group: mg.Group, MemberID: mg.MemberID, Generation: mg.Generation,
		Offsets: make([]api.OffsetCommit, 0, len(*b.Offsets))}
	for i, o := range *b.Offsets {
		t := trimmed(o.Topic)
		switch {
		case t == "":
			return req, api.Errorf(api.CodeMissingField, "field \"offsets[%d].topic\" is required", i)
		case o.Partition == nil:
			return req, api.Errorf(api.CodeMissingField, "field \"offsets[%d].partition\" is required", i)
		case o.Offset == nil:
			return req, api.Errorf(api.CodeMissingField, "field \"offsets[%d].offset\" is required", i)
		case *o.Partition < 0:
			return req, api.Errorf(api.CodeInvalidArgument, "offsets[%d].partition must be at least 0", i)
		case *o.Offset < 0:
			return req, api.Errorf(api.CodeInvalidArgument, "offsets[%d].offset must be at least 0", i)
		}
		req.Offsets = append(req.Offsets, api.OffsetCommit{Topic: t, Partition: *o.Partition, Offset: *o.Offset, Metadata: o.Metadata})
	}
	return req, nil
}

func readGroupOffsets(_ *Server, r *http.Request) (api.OffsetsRequest, error) {
	g, err := groupName(r)
	return api.OffsetsRequest{Group: g}, err
}
