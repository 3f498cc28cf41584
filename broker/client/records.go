package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// Produce sends one record or a batch (POST /produce). When the broker
// answers with an error that says where the records are (some partitions
// of a batch failed, or the records were stored with fewer in-sync
// replicas than asked for), the returned response holds that next to the
// error: a caller retries only the records whose RecordPosition is not
// Stored, so that none is written twice.
func (c *Client) Produce(ctx context.Context, req ProduceRequest) (*ProduceResponse, error) {
	var out ProduceResponse
	wait := time.Duration(0)
	if req.Acks == AcksAll || req.Acks == "-1" {
		wait = time.Duration(req.TimeoutMs) * time.Millisecond
	}
	err := c.call(ctx, http.MethodPost, "/produce", nil, &req, &out, wait)
	var e *api.Error
	if errors.As(err, &e) && e.Produce != nil {
		o := e.Produce
		out = ProduceResponse{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset, Records: o.Records, Partial: o.Partial}
	}
	return &out, err
}

// NewProducer asks for an idempotent producer's id and epoch (POST
// /producers). Producer uses it.
func (c *Client) NewProducer(ctx context.Context) (api.Producer, error) {
	var out api.Producer
	return out, c.call(ctx, http.MethodPost, "/producers", nil, nil, &out, 0)
}

// Fetch reads records from one partition (GET /fetch).
func (c *Client) Fetch(ctx context.Context, req FetchRequest) (*FetchResponse, error) {
	q := url.Values{
		"topic":     {req.Topic},
		"partition": {strconv.FormatInt(int64(req.Partition), 10)},
	}
	if req.Offset >= 0 {
		q.Set("offset", strconv.FormatInt(req.Offset, 10))
	}
	if req.MaxRecords > 0 {
		q.Set("max_records", strconv.Itoa(req.MaxRecords))
	}
	if req.MaxBytes > 0 {
		q.Set("max_bytes", strconv.Itoa(req.MaxBytes))
	}
	if req.WaitMs > 0 {
		q.Set("wait_ms", strconv.Itoa(req.WaitMs))
	}
	if req.Encoding != "" {
		q.Set("encoding", req.Encoding)
	}
	var out FetchResponse
	return &out, c.call(ctx, http.MethodGet, "/fetch", q, nil, &out, time.Duration(req.WaitMs)*time.Millisecond)
}
