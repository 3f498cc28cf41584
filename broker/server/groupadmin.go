package server

import (
	"net/http"
	"strings"

	"github.com/kairolog/kairolog/broker/client"
)

// Assignment strategies a group may use.
var strategies = []string{"range", "roundrobin"}

func (s *Server) listGroups(w http.ResponseWriter, r *http.Request) {
	gl, err := s.b.ListGroups(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	gl.Groups = nonNil(gl.Groups)
	writeJSON(w, http.StatusOK, gl)
}

func (s *Server) describeGroup(w http.ResponseWriter, r *http.Request) {
	g, ok := s.groupName(w, r)
	if !ok {
		return
	}
	var topics []string
	if v, ok := newQuery(r).opt("topics"); ok {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				topics = append(topics, t)
			}
		}
	}
	d, err := s.b.DescribeGroup(r.Context(), g, topics)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) setGroupConfig(w http.ResponseWriter, r *http.Request) {
	g, ok := s.groupName(w, r)
	if !ok {
		return
	}
	var body struct {
		SessionTimeoutMs   *int64  `json:"session_timeout_ms"`
		AssignmentStrategy *string `json:"assignment_strategy"`
	}
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	if body.SessionTimeoutMs == nil && body.AssignmentStrategy == nil {
		s.fail(w, r, client.CodeMissingField, "send session_timeout_ms, assignment_strategy or both")
		return
	}
	var cfg client.GroupConfig
	if body.SessionTimeoutMs != nil {
		if *body.SessionTimeoutMs < 1 || *body.SessionTimeoutMs > maxTimeoutMs {
			s.fail(w, r, client.CodeInvalidArgument, "session_timeout_ms must be between 1 and %d, got %d", int64(maxTimeoutMs), *body.SessionTimeoutMs)
			return
		}
		cfg.SessionTimeoutMs = *body.SessionTimeoutMs
	}
	if body.AssignmentStrategy != nil {
		st := strings.ToLower(strings.TrimSpace(*body.AssignmentStrategy))
		if st != strategies[0] && st != strategies[1] {
			s.fail(w, r, client.CodeInvalidArgument, "assignment_strategy must be \"range\" or \"roundrobin\", got %q", *body.AssignmentStrategy)
			return
		}
		cfg.AssignmentStrategy = st
	}
	out, err := s.b.SetGroupConfig(r.Context(), g, cfg)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) resetOffsets(w http.ResponseWriter, r *http.Request) {
	g, ok := s.groupName(w, r)
	if !ok {
		return
	}
	var body struct {
		To        *string   `json:"to"`
		Offset    *int64    `json:"offset"`
		Timestamp *int64    `json:"timestamp"`
		Topics    *[]string `json:"topics"`
	}
	if err := s.decodeBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	req := client.ResetOffsetsRequest{To: strings.ToLower(trimmed(body.To)), Offset: body.Offset, Timestamp: body.Timestamp}
	switch req.To {
	case "":
		s.writeError(w, r, required("to"))
		return
	case client.ResetEarliest, client.ResetLatest:
	case client.ResetOffset:
		if body.Offset == nil {
			s.writeError(w, r, required("offset"))
			return
		}
		if *body.Offset < 0 {
			s.fail(w, r, client.CodeInvalidArgument, "offset must be at least 0, got %d", *body.Offset)
			return
		}
	case client.ResetTimestamp:
		if body.Timestamp == nil {
			s.writeError(w, r, required("timestamp"))
			return
		}
		if *body.Timestamp < 0 {
			s.fail(w, r, client.CodeInvalidArgument, "timestamp must be Unix milliseconds, got %d", *body.Timestamp)
			return
		}
	default:
		s.fail(w, r, client.CodeInvalidArgument, "to must be earliest, latest, offset or timestamp, got %q", req.To)
		return
	}
	var topics []string
	if body.Topics != nil {
		topics = *body.Topics
	}
	for i, t := range topics {
		if t = strings.TrimSpace(t); t == "" {
			s.fail(w, r, client.CodeInvalidArgument, "topics[%d] is empty", i)
			return
		}
		req.Topics = append(req.Topics, t)
	}
	offs, err := s.b.ResetOffsets(r.Context(), g, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.ResetOffsetsResponse{Group: g, Offsets: nonNil(offs)})
}

func (s *Server) deleteGroup(w http.ResponseWriter, r *http.Request) {
	g, ok := s.groupName(w, r)
	if !ok {
		return
	}
	if err := s.b.DeleteGroup(r.Context(), g); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.GroupStatus{Status: "deleted", Group: g})
}
