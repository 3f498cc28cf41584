package client

import (
	"context"
	"net/http"
	"strconv"

	"github.com/kairolog/kairolog/broker/api"
)

func brokerPath(id int32, rest string) string {
	return "/brokers/" + strconv.FormatInt(int64(id), 10) + rest
}

// Health checks that the broker process is alive.
func (c *Client) Health(ctx context.Context) error {
	return c.call(ctx, http.MethodGet, "/health", nil, nil, nil, 0)
}

// Ready checks that the broker has joined the cluster and serves requests.
func (c *Client) Ready(ctx context.Context) error {
	return c.call(ctx, http.MethodGet, "/ready", nil, nil, nil, 0)
}

// Metadata describes the cluster: brokers, controller and topics.
func (c *Client) Metadata(ctx context.Context) (*api.Metadata, error) {
	var out api.Metadata
	return &out, c.call(ctx, http.MethodGet, "/metadata", nil, nil, &out, 0)
}

// Brokers lists the brokers with their partition and leader counts.
func (c *Client) Brokers(ctx context.Context) ([]api.BrokerInfo, error) {
	var out struct {
		Brokers []api.BrokerInfo `json:"brokers"`
	}
	if err := c.call(ctx, http.MethodGet, "/brokers", nil, nil, &out, 0); err != nil {
		return nil, err
	}
	return out.Brokers, nil
}

// Broker describes one broker.
func (c *Client) Broker(ctx context.Context, id int32) (*api.BrokerInfo, error) {
	var out api.BrokerInfo
	return &out, c.call(ctx, http.MethodGet, brokerPath(id, ""), nil, nil, &out, 0)
}

// SafeToRestart says whether stopping broker id now keeps every partition at
// min.insync.replicas.
func (c *Client) SafeToRestart(ctx context.Context, id int32) (*api.SafeToRestart, error) {
	var out api.SafeToRestart
	return &out, c.call(ctx, http.MethodGet, brokerPath(id, "/safe-to-restart"), nil, nil, &out, 0)
}

// Drain starts moving every replica off broker id and says how many
// replicas it still holds.
func (c *Client) Drain(ctx context.Context, id int32) (remaining int, err error) {
	var out struct {
		RemainingReplicas int `json:"remaining_replicas"`
	}
	err = c.call(ctx, http.MethodPost, brokerPath(id, "/drain"), nil, nil, &out, 0)
	return out.RemainingReplicas, err
}

// CancelDrain makes a draining broker take replicas again.
func (c *Client) CancelDrain(ctx context.Context, id int32) error {
	return c.call(ctx, http.MethodPost, brokerPath(id, "/cancel-drain"), nil, nil, nil, 0)
}

// RemoveBroker removes a drained broker from the cluster and the quorum.
func (c *Client) RemoveBroker(ctx context.Context, id int32) error {
	return c.call(ctx, http.MethodDelete, brokerPath(id, ""), nil, nil, nil, 0)
}

// DemoteVoter takes a broker out of the metadata quorum's voters; it stays
// a broker.
func (c *Client) DemoteVoter(ctx context.Context, id int32) error {
	return c.call(ctx, http.MethodPost, brokerPath(id, "/demote"), nil, nil, nil, 0)
}

// RebalanceCluster moves replicas so every broker holds a fair share, and
// says how many moves it started.
func (c *Client) RebalanceCluster(ctx context.Context) (moves int, err error) {
	var out struct {
		Moves int `json:"moves"`
	}
	err = c.call(ctx, http.MethodPost, "/cluster/rebalance", nil, nil, &out, 0)
	return out.Moves, err
}
