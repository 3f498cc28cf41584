package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// JoinMember registers a member with the original group API (POST /groups/join).
func (c *Client) JoinMember(ctx context.Context, group, member string) error {
	return c.call(ctx, http.MethodPost, "/groups/join", nil, MemberRequest{group, member}, nil, 0)
}

// LeaveMember removes a member (POST /groups/leave).
func (c *Client) LeaveMember(ctx context.Context, group, member string) error {
	return c.call(ctx, http.MethodPost, "/groups/leave", nil, MemberRequest{group, member}, nil, 0)
}

// HeartbeatMember records that a member was seen (POST /groups/heartbeat).
func (c *Client) HeartbeatMember(ctx context.Context, group, member string) error {
	return c.call(ctx, http.MethodPost, "/groups/heartbeat", nil, MemberRequest{group, member}, nil, 0)
}

// Members lists a group's registered members with when each was last seen.
func (c *Client) Members(ctx context.Context, group string) (*MembersResponse, error) {
	var out MembersResponse
	return &out, c.call(ctx, http.MethodGet, "/groups/members", url.Values{"group": {group}}, nil, &out, 0)
}

// StaleMembers lists members not seen for timeoutMs.
func (c *Client) StaleMembers(ctx context.Context, group string, timeoutMs int64) (*StaleMembersResponse, error) {
	q := url.Values{"group": {group}, "timeout_ms": {strconv.FormatInt(timeoutMs, 10)}}
	var out StaleMembersResponse
	return &out, c.call(ctx, http.MethodGet, "/groups/stale", q, nil, &out, 0)
}

// RemoveStaleMembers removes members not seen for timeoutMs.
func (c *Client) RemoveStaleMembers(ctx context.Context, group string, timeoutMs int64) (*RemoveStaleResponse, error) {
	var out RemoveStaleResponse
	return &out, c.call(ctx, http.MethodPost, "/groups/remove-stale", nil, RemoveStaleRequest{group, timeoutMs}, &out, 0)
}

// Assign computes (and does not save) an assignment of topic's partitions.
func (c *Client) Assign(ctx context.Context, topic string, members []string) (*AssignResponse, error) {
	req := AssignRequest{Topic: topic, Members: make([]Member, 0, len(members))}
	for _, m := range members {
		req.Members = append(req.Members, Member{ID: m})
	}
	var out AssignResponse
	return &out, c.call(ctx, http.MethodPost, "/groups/assign", nil, req, &out, 0)
}

// Rebalance assigns topic's partitions to the group's members and saves it.
func (c *Client) Rebalance(ctx context.Context, group, topic string) (*RebalanceResponse, error) {
	var out RebalanceResponse
	return &out, c.call(ctx, http.MethodPost, "/groups/rebalance", nil, GroupTopicRequest{group, topic}, &out, 0)
}

// CleanupAndRebalance removes stale members, then rebalances and saves.
func (c *Client) CleanupAndRebalance(ctx context.Context, group, topic string, timeoutMs int64) (*CleanupRebalanceResponse, error) {
	var out CleanupRebalanceResponse
	in := CleanupRebalanceRequest{group, topic, timeoutMs}
	return &out, c.call(ctx, http.MethodPost, "/groups/cleanup-and-rebalance", nil, in, &out, 0)
}

// SavedAssignments reads the saved assignment of a group and topic.
func (c *Client) SavedAssignments(ctx context.Context, group, topic string) (*SavedAssignments, error) {
	var out SavedAssignments
	q := url.Values{"group": {group}, "topic": {topic}}
	return &out, c.call(ctx, http.MethodGet, "/groups/assignments", q, nil, &out, 0)
}

// DeleteSavedAssignments deletes the saved assignment of a group and topic.
func (c *Client) DeleteSavedAssignments(ctx context.Context, group, topic string) error {
	q := url.Values{"group": {group}, "topic": {topic}}
	return c.call(ctx, http.MethodDelete, "/groups/assignments", q, nil, nil, 0)
}

// CommitOffset commits one offset (POST /offsets/commit).
func (c *Client) CommitOffset(ctx context.Context, req CommitOffsetRequest) error {
	return c.call(ctx, http.MethodPost, "/offsets/commit", nil, req, nil, 0)
}

// Offset reads one committed offset (GET /offsets).
func (c *Client) Offset(ctx context.Context, group, topic string, partition int32) (*OffsetLookup, error) {
	q := url.Values{"group": {group}, "topic": {topic}, "partition": {strconv.FormatInt(int64(partition), 10)}}
	var out OffsetLookup
	return &out, c.call(ctx, http.MethodGet, "/offsets", q, nil, &out, 0)
}
