package httpapi_test

import (
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	fuzzOnce sync.Once
	fuzzNode *node
)

// fuzzBroker is one broker shared by every fuzz input: starting one per
// input would measure raft start-up, not the handlers.
func fuzzBroker(t *testing.T) *node {
	fuzzOnce.Do(func() {
		s := testSettings()
		s.MaxPartitions = 8 // random creates stay cheap
		// Not t.TempDir: that goes away with the first input's test.
		dir, err := os.MkdirTemp("", "kairo-fuzz-")
		if err != nil {
			t.Fatal(err)
		}
		fuzzNode = startNode(&noCleanupT{t}, nodeOptions{settings: &s, dataDir: dir})
		fuzzNode.waitReady(t)
		fuzzNode.expect(t, "POST", "/topics", `{"name":"orders","partitions":2}`, 201)
		fuzzNode.expect(t, "POST", "/produce", `{"topic":"orders","partition":0,"message":"seed"}`, 200)
		fuzzNode.expect(t, "POST", "/groups/join", `{"group":"g","member_id":"m"}`, 200)
	})
	return fuzzNode
}

// FuzzHandlers sends random methods, paths, queries and bodies to one
// in-process broker. A reply must be JSON with "error" and "code" for every
// failure, and never a 5xx: bad input is the client's fault.
func FuzzHandlers(f *testing.F) {
	for _, c := range badCases {
		path, query, _ := strings.Cut(c.path, "?")
		if len(c.body) < 4096 {
			f.Add(c.method, path, query, c.body)
		}
	}
	for _, s := range [][4]string{
		{"POST", "/produce", "", `{"topic":"orders","records":[{"key":"k","value":"v","headers":{"h":"x"}}],"acks":"all"}`},
		{"GET", "/fetch", "topic=orders&partition=0&offset=0&max_records=1&wait_ms=1", ""},
		{"POST", "/groups/g/join", "", `{"member_id":"","topics":["orders"],"session_timeout_ms":1000,"rebalance_timeout_ms":50}`},
		{"POST", "/groups/cleanup-and-rebalance", "", `{"group":"g","topic":"orders","timeout_ms":1}`},
		{"PATCH", "/topics/orders/config", "", `{"config":{"retention.ms":1000,"flush.ms":null}}`},
		{"GET", "/groups/g", "topics=orders,nope", ""},
		{"POST", "/topics", "", `{"name":"fz","partitions":2,"config":{"min.insync.replicas":1}}`},
		{"GET", "/metadata", "", ""},
		{"POST", "/producers", "", ""},
		{"POST", "/produce", "", `{"topic":"orders","partition":0,"producer_id":0,"producer_epoch":0,"sequence":0,"records":[{"value":"v"}]}`},
		{"GET", "/internal/broker/offsets", "topic=orders&partition=x", ""},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, method, path, query, body string) {
		n := fuzzBroker(t)
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#?") {
			return // not a request line a client can send
		}
		if strings.ContainsFunc(query, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '#' }) {
			return // net/http itself answers an unparsable request line
		}
		if method == "" || strings.ContainsAny(method, " \r\n\t()<>@,;:\\\"/[]?={}") {
			return
		}
		req, err := http.NewRequest(method, n.url+path, strings.NewReader(body))
		if err != nil {
			return
		}
		req.URL.RawQuery = query
		req.Header.Set("Content-Type", "application/json")
		if strings.Contains(query, "wait_ms") || strings.Contains(path, "/join") {
			// Bound long polls and rebalances so the fuzzer keeps moving.
			ctx, cancel := contextWithTimeout(3 * time.Second)
			defer cancel()
			req = req.WithContext(ctx)
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return // a client-side timeout of a long poll
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 500 && resp.StatusCode != http.StatusServiceUnavailable {
			reply, _ := io.ReadAll(resp.Body)
			t.Fatalf("%s %s?%s %q: status %d: %s", method, path, query, body, resp.StatusCode, reply)
		}
		if resp.StatusCode == http.StatusServiceUnavailable && !strings.Contains(path, "/groups/") {
			t.Fatalf("%s %s?%s %q: 503 outside the group protocol", method, path, query, body)
		}
		if resp.StatusCode >= 400 {
			checkErrorBody(t, resp)
		}
	})
}
