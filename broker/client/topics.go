package client

import (
	"context"
	"net/http"
	"net/url"
)

// CreateTopic creates a topic (POST /topics).
func (c *Client) CreateTopic(ctx context.Context, req CreateTopicRequest) (*CreateTopicResponse, error) {
	var out CreateTopicResponse
	return &out, c.call(ctx, http.MethodPost, "/topics", nil, req, &out, 0)
}

// ListTopics lists topic names; internal topics too when internal is true.
func (c *Client) ListTopics(ctx context.Context, internal bool) ([]string, error) {
	var q url.Values
	if internal {
		q = url.Values{"internal": {"true"}}
	}
	var out TopicList
	if err := c.call(ctx, http.MethodGet, "/topics", q, nil, &out, 0); err != nil {
		return nil, err
	}
	return out.Topics, nil
}

// DescribeTopic describes one topic and its partitions.
func (c *Client) DescribeTopic(ctx context.Context, name string) (*TopicDescription, error) {
	var out TopicDescription
	return &out, c.call(ctx, http.MethodGet, "/topics/"+esc(name), nil, nil, &out, 0)
}

// DeleteTopic deletes a topic and its data.
func (c *Client) DeleteTopic(ctx context.Context, name string) error {
	return c.call(ctx, http.MethodDelete, "/topics/"+esc(name), nil, nil, nil, 0)
}

// AddPartitions raises a topic's partition count to partitions.
func (c *Client) AddPartitions(ctx context.Context, name string, partitions int32) (*PartitionsResponse, error) {
	var out PartitionsResponse
	in := map[string]int32{"partitions": partitions}
	return &out, c.call(ctx, http.MethodPost, "/topics/"+esc(name)+"/partitions", nil, in, &out, 0)
}

// SetTopicConfig replaces a topic's config overrides (PUT): keys left out go
// back to the broker default.
func (c *Client) SetTopicConfig(ctx context.Context, name string, config map[string]string) (*TopicConfigResponse, error) {
	if config == nil {
		config = map[string]string{}
	}
	var out TopicConfigResponse
	in := map[string]any{"config": config}
	return &out, c.call(ctx, http.MethodPut, "/topics/"+esc(name)+"/config", nil, in, &out, 0)
}

// PatchTopicConfig changes only the keys given (PATCH); a nil value removes
// that override.
func (c *Client) PatchTopicConfig(ctx context.Context, name string, config map[string]*string) (*TopicConfigResponse, error) {
	var out TopicConfigResponse
	in := map[string]any{"config": config}
	return &out, c.call(ctx, http.MethodPatch, "/topics/"+esc(name)+"/config", nil, in, &out, 0)
}

// SetReplicationFactor changes how many replicas each partition has.
func (c *Client) SetReplicationFactor(ctx context.Context, name string, rf int16) (*ReplicationFactorResponse, error) {
	var out ReplicationFactorResponse
	in := map[string]int16{"replication_factor": rf}
	return &out, c.call(ctx, http.MethodPost, "/topics/"+esc(name)+"/replication-factor", nil, in, &out, 0)
}
