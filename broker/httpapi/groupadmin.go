package httpapi

import (
	"net/http"
	"strings"

	"github.com/kairolog/kairolog/broker/api"
)

// Group administration: list, describe, configure, reset and delete.

func (s *Server) groupAdminRoutes() {
	s.handle("GET /groups", "list_groups", kindAdmin, endpoint(s, none, withoutRequest(s.b.ListGroups),
		ok(func(_ struct{}, gl api.GroupList) any { gl.Groups = nonNil(gl.Groups); return gl })))
	s.handle("GET /groups/{group}", "describe_group", kindAdmin, endpoint(s, readDescribeGroup, s.b.DescribeGroup, result))
	s.handle("DELETE /groups/{group}", "delete_group", kindAdmin, endpoint(s, readDeleteGroup, noResult(s.b.DeleteGroup),
		ok(func(req api.DeleteGroupRequest, _ struct{}) any { return withStatus{"deleted", req} })))
	s.handle("PUT /groups/{group}/config", "set_group_config", kindAdmin, endpoint(s, fromBody[api.GroupConfig, groupConfigBody], s.b.SetGroupConfig, result))
	s.handle("POST /groups/{group}/reset-offsets", "reset_offsets", kindAdmin, endpoint(s, fromBody[api.ResetOffsetsRequest, resetBody], s.b.ResetOffsets,
		ok(func(req api.ResetOffsetsRequest, offs []api.PartitionOffset) any {
			return struct {
				Group   string                `json:"group"`
				Offsets []api.PartitionOffset `json:"offsets"`
			}{req.Group, nonNil(offs)}
		})))
	s.handle("POST /groups/{group}/delete-offsets", "delete_offsets", kindAdmin, endpoint(s, fromBody[api.DeleteOffsetsRequest, deleteOffsetsBody], s.b.DeleteOffsets,
		ok(func(req api.DeleteOffsetsRequest, deleted []api.DeletedOffset) any {
			return struct {
				Group      string               `json:"group"`
				Partitions []api.OffsetDeletion `json:"partitions"`
			}{req.Group, offsetDeletions(deleted)}
		})))
}

// Assignment strategies a group may use.
var strategies = []string{"range", "roundrobin"}

func readDescribeGroup(_ *Server, r *http.Request) (api.DescribeGroupRequest, error) {
	g, err := groupName(r)
	if err != nil {
		return api.DescribeGroupRequest{}, err
	}
	req := api.DescribeGroupRequest{Group: g}
	if v, ok := newQuery(r).opt("topics"); ok {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				req.Topics = append(req.Topics, t)
			}
		}
	}
	return req, nil
}

func readDeleteGroup(_ *Server, r *http.Request) (api.DeleteGroupRequest, error) {
	g, err := groupName(r)
	return api.DeleteGroupRequest{Group: g}, err
}

type groupConfigBody struct {
	groupInPath
	SessionTimeoutMs   *int64  `json:"session_timeout_ms"`
	AssignmentStrategy *string `json:"assignment_strategy"`
}

func (b *groupConfigBody) request(r *http.Request) (api.GroupConfig, error) {
	g, err := groupName(r)
	if err != nil {
		return api.GroupConfig{}, err
	}
	if b.SessionTimeoutMs == nil && b.AssignmentStrategy == nil {
		return api.GroupConfig{}, api.Errorf(api.CodeMissingField, "send session_timeout_ms, assignment_strategy or both")
	}
	cfg := api.GroupConfig{Group: g}
	if b.SessionTimeoutMs != nil {
		if *b.SessionTimeoutMs < 1 || *b.SessionTimeoutMs > maxTimeoutMs {
			return cfg, api.Errorf(api.CodeInvalidArgument, "session_timeout_ms must be between 1 and %d, got %d", int64(maxTimeoutMs), *b.SessionTimeoutMs)
		}
		cfg.SessionTimeoutMs = *b.SessionTimeoutMs
	}
	if b.AssignmentStrategy != nil {
		st := strings.ToLower(strings.TrimSpace(*b.AssignmentStrategy))
		if st != strategies[0] && st != strategies[1] {
			return cfg, api.Errorf(api.CodeInvalidArgument, "assignment_strategy must be \"range\" or \"roundrobin\", got %q", *b.AssignmentStrategy)
		}
		cfg.AssignmentStrategy = st
	}
	return cfg, nil
}

type resetBody struct {
	groupInPath
	To        *string   `json:"to"`
	Offset    *int64    `json:"offset"`
	Timestamp *int64    `json:"timestamp"`
	Topics    *[]string `json:"topics"`
}

func (b *resetBody) request(r *http.Request) (api.ResetOffsetsRequest, error) {
	g, err := groupName(r)
	if err != nil {
		return api.ResetOffsetsRequest{}, err
	}
	req := api.ResetOffsetsRequest{Group: g, To: strings.ToLower(trimmed(b.To)), Offset: b.Offset, Timestamp: b.Timestamp}
	switch req.To {
	case "":
		return req, required("to")
	case api.ResetEarliest, api.ResetLatest:
	case api.ResetOffset:
		if b.Offset == nil {
			return req, required("offset")
		}
		if *b.Offset < 0 {
			return req, api.Errorf(api.CodeInvalidArgument, "offset must be at least 0, got %d", *b.Offset)
		}
	case api.ResetTimestamp:
		if b.Timestamp == nil {
			return req, required("timestamp")
		}
		if *b.Timestamp < 0 {
			return req, api.Errorf(api.CodeInvalidArgument, "timestamp must be Unix milliseconds, got %d", *b.Timestamp)
		}
	default:
		return req, api.Errorf(api.CodeInvalidArgument, "to must be earliest, latest, offset or timestamp, got %q", req.To)
	}
	if b.Topics != nil {
		for i, t := range *b.Topics {
			if t = strings.TrimSpace(t); t == "" {
				return req, api.Errorf(api.CodeInvalidArgument, "topics[%d] is empty", i)
			}
			req.Topics = append(req.Topics, t)
		}
	}
	return req, nil
}

type deleteOffsetsBody struct {
	groupInPath
	Partitions *[]api.TopicPartition `json:"partitions"`
}

func (b *deleteOffsetsBody) request(r *http.Request) (api.DeleteOffsetsRequest, error) {
	g, err := groupName(r)
	if err != nil {
		return api.DeleteOffsetsRequest{}, err
	}
	req := api.DeleteOffsetsRequest{Group: g}
	if b.Partitions == nil || len(*b.Partitions) == 0 {
		return req, required("partitions")
	}
	for i, tp := range *b.Partitions {
		if tp.Topic = strings.TrimSpace(tp.Topic); tp.Topic == "" {
			return req, api.Errorf(api.CodeInvalidArgument, "partitions[%d].topic is empty", i)
		}
		if tp.Partition < 0 {
			return req, api.Errorf(api.CodeInvalidArgument, "partitions[%d].partition must be at least 0, got %d", i, tp.Partition)
		}
		req.Partitions = append(req.Partitions, tp)
	}
	return req, nil
}

func offsetDeletions(deleted []api.DeletedOffset) []api.OffsetDeletion {
	out := make([]api.OffsetDeletion, len(deleted))
	for i, d := range deleted {
		out[i] = api.OffsetDeletion{Topic: d.Topic, Partition: d.Partition, Deleted: d.Err == nil}
		if d.Err != nil {
			out[i].Error, out[i].Code = d.Err.Message, d.Err.Code
		}
	}
	return out
}
