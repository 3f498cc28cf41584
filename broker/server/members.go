package server

import (
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/kairolog/kairolog/broker/client"
)

// The original single-node group API: members with last-seen times, saved
// assignments and plain offset commits. Replies keep that API's shapes.

type memberBody struct {
	Group    *string `json:"group"`
	MemberID *string `json:"member_id"`
}

// groupAndMember trims and checks the two ids, as the original broker did.
func (b *memberBody) groupAndMember() (string, string, *client.Error) {
	g, m := trimmed(b.Group), trimmed(b.MemberID)
	if g == "" {
		return "", "", required("group")
	}
	if m == "" {
		return "", "", required("member_id")
	}
	return g, m, nil
}

func trimmed(s *string) string {
	if s == nil {
		return ""
	}
	return strings.TrimSpace(*s)
}

func (s *Server) memberOp(w http.ResponseWriter, r *http.Request, status string,
	op func(r *http.Request, group, member string) error) {
	var body memberBody
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	g, m, cerr := body.groupAndMember()
	if cerr != nil {
		s.writeError(w, r, cerr)
		return
	}
	if err := op(r, g, m); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.StatusResponse{Status: status})
}

func (s *Server) memberJoin(w http.ResponseWriter, r *http.Request) {
	s.memberOp(w, r, "joined", func(r *http.Request, g, m string) error { return s.b.JoinMember(r.Context(), g, m) })
}

func (s *Server) memberLeave(w http.ResponseWriter, r *http.Request) {
	s.memberOp(w, r, "left", func(r *http.Request, g, m string) error { return s.b.LeaveMember(r.Context(), g, m) })
}

func (s *Server) memberHeartbeat(w http.ResponseWriter, r *http.Request) {
	s.memberOp(w, r, "heartbeat recorded", func(r *http.Request, g, m string) error {
		return s.b.HeartbeatMember(r.Context(), g, m)
	})
}

func (s *Server) members(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	g := q.str("group")
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	ms, err := s.b.Members(r.Context(), g)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.MembersResponse{Group: g, Members: nonNil(ms)})
}

// maxTimeoutMs bounds timeout_ms of the stale-member endpoints (a year).
const maxTimeoutMs = 365 * 24 * 3600 * 1000

func (s *Server) staleMembers(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	g := q.str("group")
	timeout := q.int("timeout_ms", 0, maxTimeoutMs, nil)
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	ms, err := s.b.StaleMembers(r.Context(), g, time.Duration(timeout)*time.Millisecond)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.StaleMembersResponse{Group: g, TimeoutMs: timeout, Members: nonNil(ms)})
}

type timeoutBody struct {
	Group     *string `json:"group"`
	Topic     *string `json:"topic"`
	TimeoutMs *int64  `json:"timeout_ms"`
}

func (b *timeoutBody) timeout() (int64, *client.Error) {
	if b.TimeoutMs == nil {
		return 0, required("timeout_ms")
	}
	if *b.TimeoutMs < 0 || *b.TimeoutMs > maxTimeoutMs {
		return 0, invalid("timeout_ms must be between 0 and %d, got %d", int64(maxTimeoutMs), *b.TimeoutMs)
	}
	return *b.TimeoutMs, nil
}

func (s *Server) removeStale(w http.ResponseWriter, r *http.Request) {
	var body timeoutBody
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	g := trimmed(body.Group)
	if g == "" {
		s.writeError(w, r, required("group"))
		return
	}
	timeout, cerr := body.timeout()
	if cerr != nil {
		s.writeError(w, r, cerr)
		return
	}
	removed, err := s.b.RemoveStaleMembers(r.Context(), g, time.Duration(timeout)*time.Millisecond)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.RemoveStaleResponse{Group: g, TimeoutMs: timeout, RemovedMembers: idsOnly(removed)})
}

func (s *Server) assign(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Topic   *string `json:"topic"`
		Members *[]struct {
			ID *string `json:"id"`
		} `json:"members"`
	}
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	topic := trimmed(body.Topic)
	if topic == "" {
		s.writeError(w, r, required("topic"))
		return
	}
	if body.Members == nil {
		s.writeError(w, r, required("members"))
		return
	}
	ids := make([]string, 0, len(*body.Members))
	for i, m := range *body.Members {
		id := trimmed(m.ID)
		if id == "" {
			s.writeError(w, r, client.Errorf(client.CodeMissingField, "field \"members[%d].id\" is required", i))
			return
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		s.fail(w, r, client.CodeNoActiveMembers, "no members to assign partitions to")
		return
	}
	as, err := s.b.Assign(r.Context(), topic, ids)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.AssignResponse{Assignments: nonNil(as)})
}

func (s *Server) rebalance(w http.ResponseWriter, r *http.Request) {
	var body timeoutBody
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	g, topic := trimmed(body.Group), trimmed(body.Topic)
	if g == "" {
		s.writeError(w, r, required("group"))
		return
	}
	if topic == "" {
		s.writeError(w, r, required("topic"))
		return
	}
	as, err := s.b.Rebalance(r.Context(), g, topic)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.RebalanceResponse{Group: g, Assignments: nonNil(as)})
}

func (s *Server) cleanupAndRebalance(w http.ResponseWriter, r *http.Request) {
	var body timeoutBody
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	g, topic := trimmed(body.Group), trimmed(body.Topic)
	if g == "" {
		s.writeError(w, r, required("group"))
		return
	}
	if topic == "" {
		s.writeError(w, r, required("topic"))
		return
	}
	timeout, cerr := body.timeout()
	if cerr != nil {
		s.writeError(w, r, cerr)
		return
	}
	removed, as, err := s.b.CleanupAndRebalance(r.Context(), g, topic, time.Duration(timeout)*time.Millisecond)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.CleanupRebalanceResponse{Group: g, Topic: topic, TimeoutMs: timeout,
		RemovedMembers: idsOnly(removed), Assignments: nonNil(as)})
}

func (s *Server) savedAssignments(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	g, topic := q.str("group"), q.str("topic")
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	found, as, err := s.b.SavedAssignments(r.Context(), g, topic)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.SavedAssignments{Group: g, Topic: topic, Found: found, Assignments: nonNil(as)})
}

func (s *Server) deleteAssignments(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	g, topic := q.str("group"), q.str("topic")
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	if err := s.b.DeleteSavedAssignments(r.Context(), g, topic); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.DeletedAssignments{Status: "deleted", Group: g, Topic: topic})
}

func (s *Server) commitOffset(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Group      *string `json:"group"`
		Topic      *string `json:"topic"`
		Partition  *int32  `json:"partition"`
		Offset     *int64  `json:"offset"`
		MemberID   *string `json:"member_id"`
		Generation *int32  `json:"generation"`
	}
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	req := client.CommitOffsetRequest{Group: trimmed(body.Group), Topic: trimmed(body.Topic),
		MemberID: trimmed(body.MemberID), Generation: body.Generation}
	switch {
	case req.Group == "":
		s.writeError(w, r, required("group"))
		return
	case req.Topic == "":
		s.writeError(w, r, required("topic"))
		return
	case body.Partition == nil:
		s.writeError(w, r, required("partition"))
		return
	case body.Offset == nil:
		s.writeError(w, r, required("offset"))
		return
	case *body.Partition < 0:
		s.writeError(w, r, invalid("partition must be at least 0, got %d", *body.Partition))
		return
	case *body.Offset < 0:
		s.writeError(w, r, invalid("offset must be at least 0, got %d", *body.Offset))
		return
	case (req.MemberID == "") != (req.Generation == nil):
		s.writeError(w, r, invalid("member_id and generation fence a commit together; send both or neither"))
		return
	}
	req.Partition, req.Offset = *body.Partition, *body.Offset
	if err := s.b.CommitOffset(r.Context(), req); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.StatusResponse{Status: "committed"})
}

func (s *Server) getOffset(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	g, topic := q.str("group"), q.str("topic")
	p := int32(q.int("partition", 0, math.MaxInt32, nil))
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	off, found, err := s.b.Offset(r.Context(), g, topic, p)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !found {
		off = 0
	}
	writeJSON(w, http.StatusOK, client.OffsetLookup{Group: g, Topic: topic, Partition: p, Offset: off, Found: found})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// idsOnly strips last_seen: removed_members carries ids only.
func idsOnly(ms []client.Member) []client.Member {
	out := make([]client.Member, len(ms))
	for i, m := range ms {
		out[i] = client.Member{ID: m.ID}
	}
	return out
}
