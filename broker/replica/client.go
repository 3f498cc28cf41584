package replica

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// peerClient speaks the internal replica API to other brokers.
type peerClient struct {
	http *http.Client
}

func newPeerClient(c *http.Client) *peerClient {
	if c == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// One kept-alive connection per followed partition and leader.
		t.MaxIdleConnsPerHost = 1024
		c = &http.Client{Transport: t}
	}
	return &peerClient{http: c}
}

// baseURL accepts a broker's advertised address with or without a scheme.
func baseURL(addr string) string {
	if strings.HasPrefix(addr, "http://") || strings.HasPrefix(addr, "https://") {
		return strings.TrimSuffix(addr, "/")
	}
	return "http://" + addr
}

func (c *peerClient) get(ctx context.Context, addr, path string, q url.Values) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL(addr)+path+"?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	return c.http.Do(req)
}

// readError turns a non-200 reply into a typed error.
func readError(resp *http.Response, topic string, partition int32, offset int64) error {
	var body errorBody
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err := json.Unmarshal(b, &body); err != nil || body.Code == "" {
		return fmt.Errorf("leader answered %s: %q", resp.Status, b)
	}
	return decodeError(topic, partition, offset, body)
}

func partitionQuery(topic, topicID string, partition, replicaID, leaderEpoch int32) url.Values {
	return url.Values{
		"topic":        {topic},
		"topic_id":     {topicID},
		"partition":    {strconv.Itoa(int(partition))},
		"replica_id":   {strconv.Itoa(int(replicaID))},
		"leader_epoch": {strconv.Itoa(int(leaderEpoch))},
	}
}

func (c *peerClient) fetch(ctx context.Context, addr string, r fetchRequest) (followerFetchResult, error) {
	q := partitionQuery(r.Topic, r.TopicID, r.Partition, r.ReplicaID, r.LeaderEpoch)
	q.Set("fetch_offset", strconv.FormatInt(r.FetchOffset, 10))
	q.Set("max_bytes", strconv.Itoa(r.MaxBytes))
	q.Set("wait_ms", strconv.FormatInt(r.Wait.Milliseconds(), 10))
	// The leader answers after at most wait; anything much later is a
	// dead connection.
	ctx, cancel := context.WithTimeout(ctx, r.Wait+10*time.Second)
	defer cancel()
	resp, err := c.get(ctx, addr, pathFetch, q)
	if err != nil {
		return followerFetchResult{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return followerFetchResult{}, readError(resp, r.Topic, r.Partition, r.FetchOffset)
	}
	var res followerFetchResult
	for _, h := range []struct {
		name string
		dst  *int64
	}{{headerHW, &res.HighWatermark}, {headerLogStart, &res.LogStartOffset}, {headerLogEnd, &res.LogEndOffset}} {
		v, err := strconv.ParseInt(resp.Header.Get(h.name), 10, 64)
		if err != nil {
			return followerFetchResult{}, fmt.Errorf("leader reply: bad %s header: %w", h.name, err)
		}
		*h.dst = v
	}
	epoch, err := strconv.ParseInt(resp.Header.Get(headerEpoch), 10, 32)
	if err != nil || int32(epoch) != r.LeaderEpoch {
		return followerFetchResult{}, fmt.Errorf("leader reply: epoch %q, asked for %d", resp.Header.Get(headerEpoch), r.LeaderEpoch)
	}
	res.LeaderEpoch = int32(epoch)
	if res.Batches, err = io.ReadAll(resp.Body); err != nil {
		return followerFetchResult{}, err
	}
	return res, nil
}

func (c *peerClient) epochEnd(ctx context.Context, addr string, r epochEndRequest) (epoch int32, end int64, err error) {
	q := partitionQuery(r.Topic, r.TopicID, r.Partition, r.ReplicaID, r.LeaderEpoch)
	q.Set("epoch", strconv.Itoa(int(r.Epoch)))
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := c.get(ctx, addr, pathEpochEnd, q)
	if err != nil {
		return -1, -1, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return -1, -1, readError(resp, r.Topic, r.Partition, -1)
	}
	var body epochEndResponse
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return -1, -1, fmt.Errorf("leader reply: %w", err)
	}
	return body.Epoch, body.EndOffset, nil
}
