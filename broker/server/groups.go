package server

import (
	"net/http"
	"slices"
	"strings"

	"github.com/kairolog/kairolog/broker/client"
)

// reservedGroups are the path segments of the original group API; a group by
// one of these names cannot be addressed as /groups/{g}.
var reservedGroups = []string{"assign", "rebalance", "cleanup-and-rebalance", "assignments",
	"join", "leave", "heartbeat", "members", "stale", "remove-stale"}

// groupName reads {group}; it answers and returns false when it is reserved.
func (s *Server) groupName(w http.ResponseWriter, r *http.Request) (string, bool) {
	g := strings.TrimSpace(r.PathValue("group"))
	if g == "" {
		s.writeError(w, r, required("group"))
		return "", false
	}
	if slices.Contains(reservedGroups, g) {
		s.fail(w, r, client.CodeMethodNotAllowed, "method %s is not allowed on %s", r.Method, r.URL.Path)
		return "", false
	}
	return g, true
}

func (s *Server) joinGroup(w http.ResponseWriter, r *http.Request) {
	g, ok := s.groupName(w, r)
	if !ok {
		return
	}
	var body struct {
		MemberID           *string   `json:"member_id"`
		Topics             *[]string `json:"topics"`
		SessionTimeoutMs   *int64    `json:"session_timeout_ms"`
		RebalanceTimeoutMs *int64    `json:"rebalance_timeout_ms"`
		ClientID           *string   `json:"client_id"`
	}
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	if body.Topics == nil || len(*body.Topics) == 0 {
		s.writeError(w, r, required("topics"))
		return
	}
	req := client.JoinGroupRequest{MemberID: trimmed(body.MemberID), ClientID: trimmed(body.ClientID)}
	for i, t := range *body.Topics {
		t = strings.TrimSpace(t)
		if t == "" {
			s.fail(w, r, client.CodeInvalidArgument, "topics[%d] is empty", i)
			return
		}
		if !slices.Contains(req.Topics, t) {
			req.Topics = append(req.Topics, t)
		}
	}
	for _, f := range []struct {
		name string
		v    *int64
		dst  *int64
	}{{"session_timeout_ms", body.SessionTimeoutMs, &req.SessionTimeoutMs}, {"rebalance_timeout_ms", body.RebalanceTimeoutMs, &req.RebalanceTimeoutMs}} {
		if f.v == nil {
			continue
		}
		if *f.v < 1 || *f.v > maxTimeoutMs {
			s.fail(w, r, client.CodeInvalidArgument, "%s must be between 1 and %d, got %d", f.name, int64(maxTimeoutMs), *f.v)
			return
		}
		*f.dst = *f.v
	}
	resp, err := s.b.JoinGroup(r.Context(), g, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

type generationBody struct {
	MemberID   *string `json:"member_id"`
	Generation *int32  `json:"generation"`
}

func (b *generationBody) check() (string, int32, *client.Error) {
	m := trimmed(b.MemberID)
	if m == "" {
		return "", 0, required("member_id")
	}
	if b.Generation == nil {
		return "", 0, required("generation")
	}
	return m, *b.Generation, nil
}

func (s *Server) syncGroup(w http.ResponseWriter, r *http.Request) {
	g, ok := s.groupName(w, r)
	if !ok {
		return
	}
	var body generationBody
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	m, gen, cerr := body.check()
	if cerr != nil {
		s.writeError(w, r, cerr)
		return
	}
	resp, err := s.b.SyncGroup(r.Context(), g, m, gen)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request) {
	g, ok := s.groupName(w, r)
	if !ok {
		return
	}
	var body generationBody
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	m, gen, cerr := body.check()
	if cerr != nil {
		s.writeError(w, r, cerr)
		return
	}
	if err := s.b.Heartbeat(r.Context(), g, m, gen); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.StatusResponse{Status: "ok"})
}

func (s *Server) leaveGroup(w http.ResponseWriter, r *http.Request) {
	g, ok := s.groupName(w, r)
	if !ok {
		return
	}
	var body struct {
		MemberID *string `json:"member_id"`
	}
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	m := trimmed(body.MemberID)
	if m == "" {
		s.writeError(w, r, required("member_id"))
		return
	}
	if err := s.b.LeaveGroup(r.Context(), g, m); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.StatusResponse{Status: "left"})
}

func (s *Server) commitOffsets(w http.ResponseWriter, r *http.Request) {
	g, ok := s.groupName(w, r)
	if !ok {
		return
	}
	var body struct {
		generationBody
		Offsets *[]struct {
			Topic     *string `json:"topic"`
			Partition *int32  `json:"partition"`
			Offset    *int64  `json:"offset"`
			Metadata  string  `json:"metadata"`
		} `json:"offsets"`
	}
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	m, gen, cerr := body.check()
	if cerr != nil {
		s.writeError(w, r, cerr)
		return
	}
	if body.Offsets == nil {
		s.writeError(w, r, required("offsets"))
		return
	}
	req := client.CommitOffsetsRequest{MemberID: m, Generation: gen, Offsets: make([]client.OffsetCommit, 0, len(*body.Offsets))}
	for i, o := range *body.Offsets {
		t := trimmed(o.Topic)
		switch {
		case t == "":
			s.fail(w, r, client.CodeMissingField, "field \"offsets[%d].topic\" is required", i)
			return
		case o.Partition == nil:
			s.fail(w, r, client.CodeMissingField, "field \"offsets[%d].partition\" is required", i)
			return
		case o.Offset == nil:
			s.fail(w, r, client.CodeMissingField, "field \"offsets[%d].offset\" is required", i)
			return
		case *o.Partition < 0:
			s.fail(w, r, client.CodeInvalidArgument, "offsets[%d].partition must be at least 0", i)
			return
		case *o.Offset < 0:
			s.fail(w, r, client.CodeInvalidArgument, "offsets[%d].offset must be at least 0", i)
			return
		}
		req.Offsets = append(req.Offsets, client.OffsetCommit{Topic: t, Partition: *o.Partition, Offset: *o.Offset, Metadata: o.Metadata})
	}
	if err := s.b.CommitOffsets(r.Context(), g, req); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.StatusResponse{Status: "committed"})
}

func (s *Server) groupOffsets(w http.ResponseWriter, r *http.Request) {
	g, ok := s.groupName(w, r)
	if !ok {
		return
	}
	offs, err := s.b.GroupOffsets(r.Context(), g)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.GroupOffsets{Group: g, Offsets: nonNil(offs)})
}
