package httpapi

import (
	"context"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// The original single-node group API, its request and reply shapes kept
// exactly, as an adapter over the core's group requests: a member joins,
// leaves and heartbeats; members, stale members, saved assignments and
// plain offset commits. Leaving, listing members and offsets are the
// generation protocol's own requests; only what that protocol has no
// counterpart for (registering a member outside any generation, staleness
// by a timeout the request names, assignments saved per group and topic)
// has requests of its own (broker/group's package doc says why).

func (s *Server) seedGroupRoutes() {
	s.handle("POST /groups/join", "member_join", kindAdmin, endpoint(s, fromBody[api.SeenMember, memberBody],
		noResult(s.b.SeenMember), replyStatus[api.SeenMember]("joined")))
	s.handle("POST /groups/leave", "member_leave", kindAdmin, endpoint(s, fromBody[api.SeenMember, memberBody],
		noResult(s.leaveIfMember), replyStatus[api.SeenMember]("left")))
	s.handle("POST /groups/heartbeat", "member_heartbeat", kindData, endpoint(s, fromBody[api.SeenMember, heartbeatBody],
		noResult(s.b.SeenMember), replyStatus[api.SeenMember]("heartbeat recorded")))
	s.handle("GET /groups/members", "members", kindAdmin, endpoint(s, readGroupQuery, s.members,
		ok(func(g string, ms []api.Member) any { return membersReply{Group: g, Members: ms} })))
	s.handle("GET /groups/stale", "stale_members", kindAdmin, endpoint(s, readStaleQuery, s.b.StaleMembers,
		ok(func(req api.StaleMembersRequest, ms []api.Member) any {
			return staleReply{Group: req.Group, TimeoutMs: req.Timeout.Milliseconds(), Members: nonNil(ms)}
		})))
	s.handle("POST /groups/remove-stale", "remove_stale", kindAdmin, endpoint(s, fromBody[api.StaleMembersRequest, removeStaleBody], s.b.StaleMembers,
		ok(func(req api.StaleMembersRequest, ms []api.Member) any {
			return removedReply{Group: req.Group, TimeoutMs: req.Timeout.Milliseconds(), RemovedMembers: idsOnly(ms)}
		})))
	s.handle("POST /groups/assign", "assign", kindAdmin, endpoint(s, fromBody[api.AssignRequest, assignBody], s.b.Assign,
		ok(func(_ api.AssignRequest, as []api.Assignment) any {
			return struct {
				Assignments []api.Assignment `json:"assignments"`
			}{nonNil(as)}
		})))
	s.handle("POST /groups/rebalance", "rebalance", kindAdmin, endpoint(s, fromBody[api.SaveAssignmentRequest, rebalanceBody], s.b.SaveAssignment,
		ok(func(req api.SaveAssignmentRequest, res api.SaveAssignmentResult) any {
			return struct {
				Group       string           `json:"group"`
				Assignments []api.Assignment `json:"assignments"`
			}{req.Group, nonNil(res.Assignments)}
		})))
	s.handle("POST /groups/cleanup-and-rebalance", "cleanup_and_rebalance", kindAdmin, endpoint(s, fromBody[api.SaveAssignmentRequest, cleanupBody], s.b.SaveAssignment,
		ok(func(req api.SaveAssignmentRequest, res api.SaveAssignmentResult) any {
			return struct {
				Group          string           `json:"group"`
				Topic          string           `json:"topic"`
				TimeoutMs      int64            `json:"timeout_ms"`
				RemovedMembers []api.Member     `json:"removed_members"`
				Assignments    []api.Assignment `json:"assignments"`
			}{req.Group, req.Topic, req.StaleTimeout.Milliseconds(), idsOnly(res.Removed), nonNil(res.Assignments)}
		})))
	s.handle("GET /groups/assignments", "saved_assignments", kindAdmin, endpoint(s, readGroupTopicQuery, s.b.SavedAssignment,
		ok(func(req api.GroupTopic, sa api.SavedAssignment) any {
			return struct {
				Group string `json:"group"`
				Topic string `json:"topic"`
				api.SavedAssignment
			}{req.Group, req.Topic, api.SavedAssignment{Found: sa.Found, Assignments: nonNil(sa.Assignments)}}
		})))
	s.handle("DELETE /groups/assignments", "delete_assignments", kindAdmin, endpoint(s, readGroupTopicQuery, noResult(s.b.DeleteSavedAssignment),
		ok(func(req api.GroupTopic, _ struct{}) any { return withStatus{"deleted", req} })))
	s.handle("POST /offsets/commit", "commit_offset", kindData, endpoint(s, fromBody[api.CommitOffsetsRequest, commitOffsetBody],
		noResult(s.b.CommitOffsets), replyStatus[api.CommitOffsetsRequest]("committed")))
	s.handle("GET /offsets", "get_offset", kindData, endpoint(s, readOffsetQuery, s.b.Offsets,
		ok(func(req api.OffsetsRequest, offs []api.OffsetCommit) any {
			tp, off := req.Partitions[0], offs[0].Offset
			return struct {
				Group     string `json:"group"`
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
				Offset    int64  `json:"offset"`
				Found     bool   `json:"found"`
			}{req.Group, tp.Topic, tp.Partition, max(off, 0), off >= 0}
		})))
}

// leaveIfMember takes a member out of its group; leaving a missing member
// (or group) is done, as the original API has it.
func (s *Server) leaveIfMember(ctx context.Context, m api.SeenMember) error {
	err := s.b.LeaveGroup(ctx, api.LeaveGroupRequest{Group: m.Group, MemberID: m.MemberID})
	if api.IsCode(err, api.CodeUnknownMemberID) {
		return nil
	}
	return err
}

// members lists a group's members with when each was last seen: the
// group's description without its offsets; none for an unknown group.
func (s *Server) members(ctx context.Context, g string) ([]api.Member, error) {
	d, err := s.b.DescribeGroup(ctx, api.DescribeGroupRequest{Group: g, WithoutLag: true})
	if api.IsCode(err, api.CodeUnknownGroup) {
		return []api.Member{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]api.Member, len(d.Members))
	for i, m := range d.Members {
		out[i] = api.Member{ID: m.ID, LastSeen: &m.LastSeen}
	}
	return out, nil
}

type membersReply struct {
	Group   string       `json:"group"`
	Members []api.Member `json:"members"`
}

type staleReply struct {
	Group     string       `json:"group"`
	TimeoutMs int64        `json:"timeout_ms"`
	Members   []api.Member `json:"members"`
}

type removedReply struct {
	Group          string       `json:"group"`
	TimeoutMs      int64        `json:"timeout_ms"`
	RemovedMembers []api.Member `json:"removed_members"`
}

// memberBody is the body of join and leave; heartbeatBody of heartbeat.
type memberBody struct {
	Group    *string `json:"group"`
	MemberID *string `json:"member_id"`
}

type heartbeatBody struct{ memberBody }

func (b *memberBody) request(*http.Request) (api.SeenMember, error) {
	g, m := trimmed(b.Group), trimmed(b.MemberID)
	if g == "" {
		return api.SeenMember{}, required("group")
	}
	if m == "" {
		return api.SeenMember{}, required("member_id")
	}
	return api.SeenMember{Group: g, MemberID: m}, nil
}

func (b *heartbeatBody) request(r *http.Request) (api.SeenMember, error) {
	m, err := b.memberBody.request(r)
	m.Refresh = true
	return m, err
}

func trimmed(s *string) string {
	if s == nil {
		return ""
	}
	return strings.TrimSpace(*s)
}

// maxTimeoutMs bounds timeout_ms of the stale-member endpoints (a year).
const maxTimeoutMs = 365 * 24 * 3600 * 1000

func readGroupQuery(_ *Server, r *http.Request) (string, error) {
	q := newQuery(r)
	g := q.str("group")
	return g, q.error()
}

func readStaleQuery(_ *Server, r *http.Request) (api.StaleMembersRequest, error) {
	q := newQuery(r)
	req := api.StaleMembersRequest{Group: q.str("group")}
	req.Timeout = time.Duration(q.int("timeout_ms", 0, maxTimeoutMs, nil)) * time.Millisecond
	return req, q.error()
}

func readGroupTopicQuery(_ *Server, r *http.Request) (api.GroupTopic, error) {
	q := newQuery(r)
	req := api.GroupTopic{Group: q.str("group"), Topic: q.str("topic")}
	return req, q.error()
}

func readOffsetQuery(_ *Server, r *http.Request) (api.OffsetsRequest, error) {
	q := newQuery(r)
	g, topic := q.str("group"), q.str("topic")
	p := int32(q.int("partition", 0, math.MaxInt32, nil))
	return api.OffsetsRequest{Group: g, Partitions: []api.TopicPartition{{Topic: topic, Partition: p}}}, q.error()
}

type timeoutBody struct {
	Group     *string `json:"group"`
	Topic     *string `json:"topic"`
	TimeoutMs *int64  `json:"timeout_ms"`
}

func (b *timeoutBody) timeout() (time.Duration, error) {
	if b.TimeoutMs == nil {
		return 0, required("timeout_ms")
	}
	if *b.TimeoutMs < 0 || *b.TimeoutMs > maxTimeoutMs {
		return 0, invalid("timeout_ms must be between 0 and %d, got %d", int64(maxTimeoutMs), *b.TimeoutMs)
	}
	return time.Duration(*b.TimeoutMs) * time.Millisecond, nil
}

// groupTopic checks the group and, when needed, the topic.
func (b *timeoutBody) groupTopic(needTopic bool) (string, string, error) {
	g, topic := trimmed(b.Group), trimmed(b.Topic)
	if g == "" {
		return "", "", required("group")
	}
	if needTopic && topic == "" {
		return "", "", required("topic")
	}
	return g, topic, nil
}

type (
	removeStaleBody struct{ timeoutBody }
	rebalanceBody   struct{ timeoutBody }
	cleanupBody     struct{ timeoutBody }
)

func (b *removeStaleBody) request(*http.Request) (api.StaleMembersRequest, error) {
	g, _, err := b.groupTopic(false)
	if err != nil {
		return api.StaleMembersRequest{}, err
	}
	timeout, err := b.timeout()
	return api.StaleMembersRequest{Group: g, Timeout: timeout, Remove: true}, err
}

func (b *rebalanceBody) request(*http.Request) (api.SaveAssignmentRequest, error) {
	g, topic, err := b.groupTopic(true)
	return api.SaveAssignmentRequest{Group: g, Topic: topic}, err
}

func (b *cleanupBody) request(*http.Request) (api.SaveAssignmentRequest, error) {
	g, topic, err := b.groupTopic(true)
	if err != nil {
		return api.SaveAssignmentRequest{}, err
	}
	timeout, err := b.timeout()
	return api.SaveAssignmentRequest{Group: g, Topic: topic, RemoveStale: true, StaleTimeout: timeout}, err
}

type assignBody struct {
	Topic   *string `json:"topic"`
	Members *[]struct {
		ID *string `json:"id"`
	} `json:"members"`
}

func (b *assignBody) request(*http.Request) (api.AssignRequest, error) {
	topic := trimmed(b.Topic)
	if topic == "" {
		return api.AssignRequest{}, required("topic")
	}
	if b.Members == nil {
		return api.AssignRequest{}, required("members")
	}
	req := api.AssignRequest{Topic: topic, Members: make([]string, 0, len(*b.Members))}
	for i, m := range *b.Members {
		id := trimmed(m.ID)
		if id == "" {
			return req, api.Errorf(api.CodeMissingField, "field \"members[%d].id\" is required", i)
		}
		req.Members = append(req.Members, id)
	}
	if len(req.Members) == 0 {
		return req, api.Errorf(api.CodeNoActiveMembers, "no members to assign partitions to")
	}
	return req, nil
}

type commitOffsetBody struct {
	Group      *string `json:"group"`
	Topic      *string `json:"topic"`
	Partition  *int32  `json:"partition"`
	Offset     *int64  `json:"offset"`
	MemberID   *string `json:"member_id"`
	Generation *int32  `json:"generation"`
}

func (b *commitOffsetBody) request(*http.Request) (api.CommitOffsetsRequest, error) {
	req := api.CommitOffsetsRequest{Group: trimmed(b.Group), MemberID: trimmed(b.MemberID), Generation: api.NoGeneration}
	topic := trimmed(b.Topic)
	switch {
	case req.Group == "":
		return req, required("group")
	case topic == "":
		return req, required("topic")
	case b.Partition == nil:
		return req, required("partition")
	case b.Offset == nil:
		return req, required("offset")
	case *b.Partition < 0:
		return req, invalid("partition must be at least 0, got %d", *b.Partition)
	case *b.Offset < 0:
		return req, invalid("offset must be at least 0, got %d", *b.Offset)
	case (req.MemberID == "") != (b.Generation == nil):
		return req, invalid("member_id and generation fence a commit together; send both or neither")
	}
	if b.Generation != nil {
		req.Generation = *b.Generation
	}
	req.Offsets = []api.OffsetCommit{{Topic: topic, Partition: *b.Partition, Offset: *b.Offset}}
	return req, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// idsOnly strips last_seen: removed_members carries ids only.
func idsOnly(ms []api.Member) []api.Member {
	out := make([]api.Member, len(ms))
	for i, m := range ms {
		out[i] = api.Member{ID: m.ID}
	}
	return out
}
