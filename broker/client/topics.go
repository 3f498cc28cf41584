package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/kairolog/kairolog/broker/api"
)

// CreateTopic creates a topic (POST /topics).
func (c *Client) CreateTopic(ctx context.Context, req api.CreateTopicRequest) (*api.CreateTopicResult, error) {
	var out api.CreateTopicResult
	return &out, c.call(ctx, http.MethodPost, "/topics", nil, req, &out, 0)
}

// ListTopics lists topic names; internal topics too when internal is true.
func (c *Client) ListTopics(ctx context.Context, internal bool) ([]string, error) {
	var q url.Values
	if internal {
		q = url.Values{"internal": {"true"}}
	}
	var out struct {
		Topics []string `json:"topics"`
	}
	if err := c.call(ctx, http.MethodGet, "/topics", q, nil, &out, 0); err != nil {
		return nil, err
	}
	return out.Topics, nil
}

// DescribeTopic describes one topic and its partitions.
func (c *Client) DescribeTopic(ctx context.Context, name string) (*api.TopicDescription, error) {
	var out api.TopicDescription
	return &out, c.call(ctx, http.MethodGet, "/topics/"+esc(name), nil, nil, &out, 0)
}

// DeleteTopic deletes a topic and its data.
func (c *Client) DeleteTopic(ctx context.Context, name string) error {
	return c.call(ctx, http.MethodDelete, "/topics/"+esc(name), nil, nil, nil, 0)
}

// AddPartitions raises a topic's partition count to partitions.
func (c *Client) AddPartitions(ctx context.Context, name string, partitions int32) error {
	in := map[string]int32{"partitions": partitions}
	return c.call(ctx, http.MethodPost, "/topics/"+esc(name)+"/partitions", nil, in, nil, 0)
}

// SetTopicConfig replaces a topic's config overrides (PUT): keys left out go
// back to the broker default. It returns the overrides now in force.
func (c *Client) SetTopicConfig(ctx context.Context, name string, config map[string]string) (map[string]string, error) {
	if config == nil {
		config = map[string]string{}
	}
	return c.topicConfig(ctx, http.MethodPut, name, config)
}

// PatchTopicConfig changes only the keys given (PATCH); a nil value removes
// that override. It returns the overrides now in force.
func (c *Client) PatchTopicConfig(ctx context.Context, name string, config map[string]*string) (map[string]string, error) {
	return c.topicConfig(ctx, http.MethodPatch, name, config)
}

func (c *Client) topicConfig(ctx context.Context, method, name string, config any) (map[string]string, error) {
	var out struct {
		Config map[string]string `json:"config"`
	}
	in := map[string]any{"config": config}
	if err := c.call(ctx, method, "/topics/"+esc(name)+"/config", nil, in, &out, 0); err != nil {
		return nil, err
	}
	return out.Config, nil
}

// SetReplicationFactor changes how many replicas each partition has.
func (c *Client) SetReplicationFactor(ctx context.Context, name string, rf int16) error {
	in := map[string]int16{"replication_factor": rf}
	return c.call(ctx, http.MethodPost, "/topics/"+esc(name)+"/replication-factor", nil, in, nil, 0)
}

// DeleteRecords deletes the records of a topic's partitions below the
// offsets given (api.HighWatermarkOffset: every committed record), and
// answers each partition: its low watermark, or the error that left it
// as it was.
func (c *Client) DeleteRecords(ctx context.Context, topic string, partitions []api.PartitionRecordsDeletion) ([]api.RecordsDeletion, error) {
	in := struct {
		Partitions []api.PartitionRecordsDeletion `json:"partitions"`
	}{partitions}
	var out struct {
		Partitions []api.RecordsDeletion `json:"partitions"`
	}
	err := c.call(ctx, http.MethodPost, "/topics/"+esc(topic)+"/delete-records", nil, in, &out, 0)
	return out.Partitions, err
}

// ReassignPartitions starts, replaces or cancels reassignments of a
// topic's partitions, and answers each partition: its replicas
// afterwards, or why it kept them.
func (c *Client) ReassignPartitions(ctx context.Context, topic string, partitions []api.PartitionReassignment) ([]api.ReassignmentAnswer, error) {
	in := struct {
		Partitions []api.PartitionReassignment `json:"partitions"`
	}{partitions}
	var out struct {
		Partitions []api.ReassignmentAnswer `json:"partitions"`
	}
	err := c.call(ctx, http.MethodPost, "/topics/"+esc(topic)+"/reassignments", nil, in, &out, 0)
	return out.Partitions, err
}

// ElectLeaders moves the leadership of a topic's partitions (every one
// when none are named) back to their preferred replicas, and answers each
// partition: its leader, or why its preferred replica does not lead
// through this election.
func (c *Client) ElectLeaders(ctx context.Context, topic string, partitions []int32) ([]api.LeaderElection, error) {
	in := struct {
		Partitions []int32 `json:"partitions,omitempty"`
	}{partitions}
	var out struct {
		Partitions []api.LeaderElection `json:"partitions"`
	}
	err := c.call(ctx, http.MethodPost, "/topics/"+esc(topic)+"/elect-leaders", nil, in, &out, 0)
	return out.Partitions, err
}
