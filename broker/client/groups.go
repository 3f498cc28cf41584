package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

func groupPath(g string, rest string) string { return "/groups/" + esc(g) + rest }

// JoinGroup joins (or rejoins) a generation of req.Group; it waits until
// every current member has rejoined, up to the rebalance timeout.
func (c *Client) JoinGroup(ctx context.Context, req api.JoinGroupRequest) (*api.JoinGroupResult, error) {
	wait := time.Duration(req.RebalanceTimeoutMs) * time.Millisecond
	if wait == 0 {
		wait = 5 * time.Minute
	}
	var out api.JoinGroupResult
	return &out, c.call(ctx, http.MethodPost, groupPath(req.Group, "/join"), nil, req, &out, wait)
}

// SyncGroup fetches this member's assignment for a generation.
func (c *Client) SyncGroup(ctx context.Context, group, member string, generation int32) (*api.SyncGroupResult, error) {
	var out api.SyncGroupResult
	in := api.MemberGeneration{MemberID: member, Generation: generation}
	return &out, c.call(ctx, http.MethodPost, groupPath(group, "/sync"), nil, in, &out, 5*time.Minute)
}

// Heartbeat keeps a member's session; CodeRebalanceInProgress means join again.
func (c *Client) Heartbeat(ctx context.Context, group, member string, generation int32) error {
	in := api.MemberGeneration{MemberID: member, Generation: generation}
	return c.call(ctx, http.MethodPost, groupPath(group, "/heartbeat"), nil, in, nil, 0)
}

// LeaveGroup leaves the group's generation.
func (c *Client) LeaveGroup(ctx context.Context, group, member string) error {
	return c.call(ctx, http.MethodPost, groupPath(group, "/leave"), nil, api.LeaveGroupRequest{MemberID: member}, nil, 0)
}

// CommitOffsets commits offsets fenced by the member's generation.
func (c *Client) CommitOffsets(ctx context.Context, req api.CommitOffsetsRequest) error {
	return c.call(ctx, http.MethodPost, groupPath(req.Group, "/offsets"), nil, req, nil, 0)
}

// GroupOffsets lists a group's committed offsets.
func (c *Client) GroupOffsets(ctx context.Context, group string) ([]api.OffsetCommit, error) {
	var out struct {
		Offsets []api.OffsetCommit `json:"offsets"`
	}
	err := c.call(ctx, http.MethodGet, groupPath(group, "/offsets"), nil, nil, &out, 0)
	return out.Offsets, err
}

// ListGroups lists groups with members or committed offsets. When some
// brokers did not answer the list may be partial; GroupList says so.
func (c *Client) ListGroups(ctx context.Context) ([]api.GroupSummary, error) {
	out, err := c.GroupList(ctx)
	if err != nil {
		return nil, err
	}
	return out.Groups, nil
}

// GroupList is GET /groups with its partial flag and the brokers whose
// groups are missing.
func (c *Client) GroupList(ctx context.Context) (*api.GroupList, error) {
	var out api.GroupList
	if err := c.call(ctx, http.MethodGet, "/groups", nil, nil, &out, 0); err != nil {
		return nil, err
	}
	return &out, nil
}

// DescribeGroup describes a group; topics adds every partition of those
// topics to the offsets, committed or not.
func (c *Client) DescribeGroup(ctx context.Context, group string, topics ...string) (*api.GroupDescription, error) {
	var q url.Values
	if len(topics) > 0 {
		q = url.Values{"topics": {strings.Join(topics, ",")}}
	}
	var out api.GroupDescription
	return &out, c.call(ctx, http.MethodGet, groupPath(group, ""), q, nil, &out, 0)
}

// SetGroupConfig sets cfg.Group's session timeout and assignment strategy.
func (c *Client) SetGroupConfig(ctx context.Context, cfg api.GroupConfig) (*api.GroupConfig, error) {
	group := cfg.Group
	cfg.Group = ""
	var out api.GroupConfig
	return &out, c.call(ctx, http.MethodPut, groupPath(group, "/config"), nil, cfg, &out, 0)
}

// ResetOffsets moves an empty group's committed offsets.
func (c *Client) ResetOffsets(ctx context.Context, req api.ResetOffsetsRequest) ([]api.PartitionOffset, error) {
	group := req.Group
	req.Group = ""
	var out struct {
		Offsets []api.PartitionOffset `json:"offsets"`
	}
	err := c.call(ctx, http.MethodPost, groupPath(group, "/reset-offsets"), nil, req, &out, 0)
	return out.Offsets, err
}

// DeleteOffsets deletes a group's committed offsets of the partitions
// named, and answers each: a partition of a topic a member of the group
// consumes keeps its offset (Code GROUP_SUBSCRIBED_TO_TOPIC).
func (c *Client) DeleteOffsets(ctx context.Context, group string, partitions []api.TopicPartition) ([]api.OffsetDeletion, error) {
	in := struct {
		Partitions []api.TopicPartition `json:"partitions"`
	}{partitions}
	var out struct {
		Partitions []api.OffsetDeletion `json:"partitions"`
	}
	err := c.call(ctx, http.MethodPost, groupPath(group, "/delete-offsets"), nil, in, &out, 0)
	return out.Partitions, err
}

// DeleteGroup deletes an empty group's offsets and saved state.
func (c *Client) DeleteGroup(ctx context.Context, group string) error {
	return c.call(ctx, http.MethodDelete, groupPath(group, ""), nil, nil, nil, 0)
}

// CommitOffset commits one offset without a member or generation, with the
// original group API (POST /offsets/commit).
func (c *Client) CommitOffset(ctx context.Context, group, topic string, partition int32, offset int64) error {
	in := struct {
		Group     string `json:"group"`
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		Offset    int64  `json:"offset"`
	}{group, topic, partition, offset}
	return c.call(ctx, http.MethodPost, "/offsets/commit", nil, in, nil, 0)
}

// Offset reads one committed offset, and whether there is one, with the
// original group API (GET /offsets).
func (c *Client) Offset(ctx context.Context, group, topic string, partition int32) (offset int64, found bool, err error) {
	q := url.Values{"group": {group}, "topic": {topic}, "partition": {strconv.FormatInt(int64(partition), 10)}}
	var out struct {
		Offset int64 `json:"offset"`
		Found  bool  `json:"found"`
	}
	err = c.call(ctx, http.MethodGet, "/offsets", q, nil, &out, 0)
	return out.Offset, out.Found, err
}
