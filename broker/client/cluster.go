package client

import (
	"context"
	"net/http"
	"strconv"
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
func (c *Client) Metadata(ctx context.Context) (*Metadata, error) {
	var out Metadata
	return &out, c.call(ctx, http.MethodGet, "/metadata", nil, nil, &out, 0)
}

// Brokers lists the brokers with their partition and leader counts.
func (c *Client) Brokers(ctx context.Context) ([]BrokerInfo, error) {
	var out BrokerList
	if err := c.call(ctx, http.MethodGet, "/brokers", nil, nil, &out, 0); err != nil {
		return nil, err
	}
	return out.Brokers, nil
}

// Broker describes one broker.
func (c *Client) Broker(ctx context.Context, id int32) (*BrokerInfo, error) {
	var out BrokerInfo
	return &out, c.call(ctx, http.MethodGet, brokerPath(id, ""), nil, nil, &out, 0)
}

// SafeToRestart says whether stopping broker id now keeps every partition at
// min.insync.replicas.
func (c *Client) SafeToRestart(ctx context.Context, id int32) (*SafeToRestart, error) {
	var out SafeToRestart
	return &out, c.call(ctx, http.MethodGet, brokerPath(id, "/safe-to-restart"), nil, nil, &out, 0)
}

// Drain starts moving every replica off broker id.
func (c *Client) Drain(ctx context.Context, id int32) (*DrainResponse, error) {
	var out DrainResponse
	return &out, c.call(ctx, http.MethodPost, brokerPath(id, "/drain"), nil, nil, &out, 0)
}

// CancelDrain makes a draining broker take replicas again.
func (c *Client) CancelDrain(ctx context.Context, id int32) (*BrokerStatus, error) {
	var out BrokerStatus
	return &out, c.call(ctx, http.MethodPost, brokerPath(id, "/cancel-drain"), nil, nil, &out, 0)
}

// RemoveBroker removes a drained broker from the cluster and the quorum.
func (c *Client) RemoveBroker(ctx context.Context, id int32) (*BrokerStatus, error) {
	var out BrokerStatus
	return &out, c.call(ctx, http.MethodDelete, brokerPath(id, ""), nil, nil, &out, 0)
}

// DemoteVoter takes a broker out of the metadata quorum's voters; it stays
// a broker.
func (c *Client) DemoteVoter(ctx context.Context, id int32) (*BrokerStatus, error) {
	var out BrokerStatus
	return &out, c.call(ctx, http.MethodPost, brokerPath(id, "/demote"), nil, nil, &out, 0)
}

// RebalanceCluster moves replicas so every broker holds a fair share.
func (c *Client) RebalanceCluster(ctx context.Context) (*ClusterRebalanceResponse, error) {
	var out ClusterRebalanceResponse
	return &out, c.call(ctx, http.MethodPost, "/cluster/rebalance", nil, nil, &out, 0)
}
