package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStartingBrokerServesAtOnce follows the seed's script against a broker
// that has only just started: the first request that needs the metadata
// waits for it instead of answering from an image that does not yet show
// this broker alive ("0 live brokers can hold them").
func TestStartingBrokerServesAtOnce(t *testing.T) {
	n := startNode(t, nodeOptions{})
	n.expect(t, "GET", "/health", "", 200)
	subset(t, "create right after start", n.expect(t, "POST", "/topics", `{"name":"orders"}`, 201), `{"status":"created","name":"orders"}`)
	subset(t, "produce", n.expect(t, "POST", "/produce", `{"topic":"orders","partition":0,"message":"first"}`, 200), `{"offset":0}`)
	subset(t, "list", n.expect(t, "GET", "/topics", "", 200), `{"topics":["orders"]}`)
}

// TestRestartedBrokerWithoutQuorumIsNotReady restarts one broker of a
// three-voter cluster while the other two are down. It cannot catch up
// with the metadata, so every request that needs it is a retriable 503
// NOT_READY with a retry hint, after a bounded wait, never an answer from
// the image it restarted with (an empty topic list, 404 UNKNOWN_TOPIC for
// a topic that exists). Once a second voter is back, it serves.
func TestRestartedBrokerWithoutQuorumIsNotReady(t *testing.T) {
	c := newTestCluster(t, 3, 3, nil)
	c.nodes[0].expect(t, "POST", "/topics", `{"name":"orders","partitions":1,"replication_factor":3}`, 201)
	c.nodes[0].expect(t, "POST", "/produce", `{"topic":"orders","partition":0,"message":"kept","acks":"all"}`, 200)
	for i := range 3 {
		c.crash(i)
	}
	n := c.start(2)

	requests := []struct{ method, path, body string }{
		{"GET", "/topics", ""},
		{"GET", "/topics/orders", ""},
		{"POST", "/topics", `{"name":"payments"}`},
		{"GET", "/fetch?topic=orders&partition=0&offset=0", ""},
		{"POST", "/produce", `{"topic":"orders","partition":0,"message":"lost?"}`},
		{"GET", "/metadata", ""},
		{"GET", "/groups", ""},
	}
	var wg sync.WaitGroup
	for _, rq := range requests {
		wg.Go(func() {
			start := time.Now()
			resp, err := send(n.url, rq.method, rq.path, rq.body)
			if err != nil {
				t.Errorf("%s %s: %v", rq.method, rq.path, err)
				return
			}
			var body struct {
				Code         string `json:"code"`
				RetryAfterMs int64  `json:"retry_after_ms"`
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			_ = json.Unmarshal(raw, &body)
			if resp.StatusCode != 503 || body.Code != "NOT_READY" || body.RetryAfterMs <= 0 || resp.Header.Get("Retry-After") == "" {
				t.Errorf("%s %s without a quorum: %d (Retry-After %q) %s; want 503 NOT_READY with a retry hint",
					rq.method, rq.path, resp.StatusCode, resp.Header.Get("Retry-After"), raw)
			}
			if waited := time.Since(start); waited > 30*time.Second {
				t.Errorf("%s %s waited %v; the wait must be bounded", rq.method, rq.path, waited)
			}
		})
	}
	wg.Wait()
	n.expect(t, "GET", "/health", "", 200)

	// Once a second voter is back the broker answers from caught-up
	// metadata: the topic exists (never 404), and its record is fetched
	// once the partition has a leader again (a retriable 503 until then).
	c.start(0)
	n.expect(t, "GET", "/topics/orders", "", 200)
	var body string
	eventually(t, 20*time.Second, "a fetch of orders-0", func() bool {
		var st int
		st, body = n.do(t, "GET", "/fetch?topic=orders&partition=0&offset=0", "")
		if st != 200 && st != 503 {
			t.Fatalf("fetch after the quorum is back: %d %s", st, body)
		}
		return st == 200
	})
	if !strings.Contains(body, `"message":"kept"`) {
		t.Fatalf("records after the quorum is back: %s", body)
	}
}

// send sends one request and returns the response with its body unread.
func send(base, method, path, body string) (*http.Response, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		return nil, err
	}
	return httpClient.Do(req)
}
