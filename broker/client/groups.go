package client

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
)

func groupPath(g string, rest string) string { return "/groups/" + esc(g) + rest }

// JoinGroup joins (or rejoins) a generation of group; it waits until every
// current member has rejoined, up to the rebalance timeout.
func (c *Client) JoinGroup(ctx context.Context, group string, req JoinGroupRequest) (*JoinGroupResponse, error) {
	wait := time.Duration(req.RebalanceTimeoutMs) * time.Millisecond
	if wait == 0 {
		wait = 5 * time.Minute
	}
	var out JoinGroupResponse
	return &out, c.call(ctx, http.MethodPost, groupPath(group, "/join"), nil, req, &out, wait)
}

// SyncGroup fetches this member's assignment for a generation.
func (c *Client) SyncGroup(ctx context.Context, group, member string, generation int32) (*SyncGroupResponse, error) {
	var out SyncGroupResponse
	return &out, c.call(ctx, http.MethodPost, groupPath(group, "/sync"), nil, GenerationRequest{member, generation}, &out, 5*time.Minute)
}

// Heartbeat keeps a member's session; CodeRebalanceInProgress means join again.
func (c *Client) Heartbeat(ctx context.Context, group, member string, generation int32) error {
	return c.call(ctx, http.MethodPost, groupPath(group, "/heartbeat"), nil, GenerationRequest{member, generation}, nil, 0)
}

// LeaveGroup leaves the group's generation.
func (c *Client) LeaveGroup(ctx context.Context, group, member string) error {
	return c.call(ctx, http.MethodPost, groupPath(group, "/leave"), nil, LeaveGroupRequest{member}, nil, 0)
}

// CommitOffsets commits offsets fenced by the member's generation.
func (c *Client) CommitOffsets(ctx context.Context, group string, req CommitOffsetsRequest) error {
	return c.call(ctx, http.MethodPost, groupPath(group, "/offsets"), nil, req, nil, 0)
}

// GroupOffsets lists a group's committed offsets.
func (c *Client) GroupOffsets(ctx context.Context, group string) (*GroupOffsets, error) {
	var out GroupOffsets
	return &out, c.call(ctx, http.MethodGet, groupPath(group, "/offsets"), nil, nil, &out, 0)
}

// ListGroups lists groups with members or committed offsets. When some
// brokers did not answer the list may be partial; GroupList says so.
func (c *Client) ListGroups(ctx context.Context) ([]GroupSummary, error) {
	out, err := c.GroupList(ctx)
	if err != nil {
		return nil, err
	}
	return out.Groups, nil
}

// GroupList is GET /groups with its partial flag and the brokers whose
// groups are missing.
func (c *Client) GroupList(ctx context.Context) (*GroupList, error) {
	var out GroupList
	if err := c.call(ctx, http.MethodGet, "/groups", nil, nil, &out, 0); err != nil {
		return nil, err
	}
	return &out, nil
}

// DescribeGroup describes a group; topics adds every partition of those
// topics to the offsets, committed or not.
func (c *Client) DescribeGroup(ctx context.Context, group string, topics ...string) (*GroupDescription, error) {
	var q url.Values
	if len(topics) > 0 {
		q = url.Values{"topics": {strings.Join(topics, ",")}}
	}
	var out GroupDescription
	return &out, c.call(ctx, http.MethodGet, groupPath(group, ""), q, nil, &out, 0)
}

// SetGroupConfig sets a group's session timeout and assignment strategy.
func (c *Client) SetGroupConfig(ctx context.Context, group string, cfg GroupConfig) (*GroupConfig, error) {
	cfg.Group = ""
	var out GroupConfig
	return &out, c.call(ctx, http.MethodPut, groupPath(group, "/config"), nil, cfg, &out, 0)
}

// ResetOffsets moves an empty group's committed offsets.
func (c *Client) ResetOffsets(ctx context.Context, group string, req ResetOffsetsRequest) (*ResetOffsetsResponse, error) {
	var out ResetOffsetsResponse
	return &out, c.call(ctx, http.MethodPost, groupPath(group, "/reset-offsets"), nil, req, &out, 0)
}

// DeleteGroup deletes an empty group's offsets and saved state.
func (c *Client) DeleteGroup(ctx context.Context, group string) error {
	return c.call(ctx, http.MethodDelete, groupPath(group, ""), nil, nil, nil, 0)
}
