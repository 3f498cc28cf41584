package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

type badCase struct {
	method, path, body string
	status             int
	code               string
	contentType        string
}

// badCases cover malformed JSON, wrong types, missing fields, unknown
// topics, partitions and groups, out-of-range offsets and partitions, and
// wrong methods, for every endpoint.
var badCases = []badCase{
	// Routing.
	{"GET", "/nope", "", 404, "NOT_FOUND", ""},
	{"PUT", "/topics", `{}`, 405, "METHOD_NOT_ALLOWED", ""},
	{"DELETE", "/produce", "", 405, "METHOD_NOT_ALLOWED", ""},
	{"POST", "/fetch", `{}`, 405, "METHOD_NOT_ALLOWED", ""},
	{"GET", "/groups/join", "", 405, "METHOD_NOT_ALLOWED", ""},
	{"POST", "/health", "", 405, "METHOD_NOT_ALLOWED", ""},
	{"GET", "/groups/assign", "", 405, "METHOD_NOT_ALLOWED", ""},
	// Broker-to-broker paths live on the peer listener only.
	{"POST", "/internal/controller/delete-topic", `{"name":"__consumer_offsets"}`, 404, "NOT_FOUND", ""},
	{"POST", "/internal/controller/alter-config", `{"topic":"__consumer_offsets","set":{"retention.ms":"1"}}`, 404, "NOT_FOUND", ""},
	{"POST", "/internal/controller/register", `{"id":9,"http_address":"evil:8080","peer_address":"evil:9094","raft_address":"evil:9093"}`, 404, "NOT_FOUND", ""},
	{"POST", "/internal/replica/fetch-session", `{"replica_id":0,"partitions":[{"topic":"orders","partition":0,"leader_epoch":0,"fetch_offset":0}]}`, 404, "NOT_FOUND", ""},
	{"GET", "/internal/replica/fetch-session?replica_id=0", "", 404, "NOT_FOUND", ""},
	{"POST", "/internal/replica/fetch-session-wake", `{"replica_id":0,"session_id":1}`, 404, "NOT_FOUND", ""},
	{"POST", "/internal/broker/partitions", `{"partitions":[{"topic":"orders","partition":0}]}`, 404, "NOT_FOUND", ""},
	{"POST", "/internal/broker/offsets", `{"topic":"orders","partition":0}`, 404, "NOT_FOUND", ""},
	{"POST", "/internal/forward/produce", `{"topic":"orders","partition":0,"message":"x"}`, 404, "NOT_FOUND", ""},
	{"DELETE", "/internal/forward/topics/orders", "", 404, "NOT_FOUND", ""},
	// Bodies.
	{"POST", "/topics", ``, 400, "INVALID_JSON", ""},
	{"POST", "/topics", `{`, 400, "INVALID_JSON", ""},
	{"POST", "/topics", `[1,2]`, 400, "INVALID_JSON", ""},
	{"POST", "/topics", `"orders"`, 400, "INVALID_JSON", ""},
	{"POST", "/topics", `{"name":"x"} trailing`, 400, "INVALID_JSON", ""},
	{"POST", "/topics", `{"name":"x"}`, 415, "UNSUPPORTED_MEDIA_TYPE", "application/xml"},
	// Topics.
	{"POST", "/topics", `{}`, 400, "MISSING_FIELD", ""},
	{"POST", "/topics", `{"name":"   "}`, 400, "MISSING_FIELD", ""},
	{"POST", "/topics", `{"name":5}`, 400, "INVALID_JSON", ""},
	{"POST", "/topics", `{"name":"t","partitions":"four"}`, 400, "INVALID_JSON", ""},
	{"POST", "/topics", `{"name":"t","partitions":0}`, 400, "INVALID_PARTITIONS", ""},
	{"POST", "/topics", `{"name":"t","partitions":-3}`, 400, "INVALID_PARTITIONS", ""},
	{"POST", "/topics", `{"name":"t","partitions":99999999999}`, 400, "INVALID_JSON", ""},
	{"POST", "/topics", `{"name":"t","partitions":1.5}`, 400, "INVALID_JSON", ""},
	{"POST", "/topics", `{"name":"t","partitions":100000}`, 400, "INVALID_PARTITIONS", ""},
	{"POST", "/topics", `{"name":"t","replication_factor":0}`, 400, "INVALID_REPLICATION_FACTOR", ""},
	{"POST", "/topics", `{"name":"t","replication_factor":3}`, 400, "INVALID_REPLICATION_FACTOR", ""},
	{"POST", "/topics", `{"name":"t","config":{"bogus.key":"1"}}`, 400, "INVALID_CONFIG", ""},
	{"POST", "/topics", `{"name":"t","config":{"retention.ms":"soon"}}`, 400, "INVALID_CONFIG", ""},
	// The table's bounds (broker/topicconfig): values the broker took
	// before, which made every batch a segment or meant the opposite of
	// Kafka's meaning.
	{"POST", "/topics", `{"name":"t","config":{"segment.bytes":"1"}}`, 400, "INVALID_CONFIG", ""},
	{"POST", "/topics", `{"name":"t","config":{"segment.ms":"1"}}`, 400, "INVALID_CONFIG", ""},
	{"POST", "/topics", `{"name":"t","config":{"flush.ms":"0"}}`, 400, "INVALID_CONFIG", ""},
	{"POST", "/topics", `{"name":"t","config":{"retention.bytes":"0"}}`, 400, "INVALID_CONFIG", ""},
	{"PATCH", "/topics/orders/config", `{"config":{"index.interval.bytes":"0"}}`, 400, "INVALID_CONFIG", ""},
	{"PUT", "/topics/orders/config", `{"config":{"max.message.bytes":"0"}}`, 400, "INVALID_CONFIG", ""},
	{"POST", "/topics", `{"name":"t","config":{"retention.ms":[1]}}`, 400, "INVALID_JSON", ""},
	{"POST", "/topics", `{"name":"t","config":"x"}`, 400, "INVALID_JSON", ""},
	{"POST", "/topics", `{"name":"bad/name"}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/topics", `{"name":"__internal"}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/topics", `{"name":"` + strings.Repeat("a", 250) + `"}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/topics", `{"name":"orders"}`, 409, "TOPIC_ALREADY_EXISTS", ""},
	{"GET", "/topics?internal=maybe", "", 400, "INVALID_ARGUMENT", ""},
	{"GET", "/topics/nope", "", 404, "UNKNOWN_TOPIC", ""},
	{"DELETE", "/topics/nope", "", 404, "UNKNOWN_TOPIC", ""},
	{"DELETE", "/topics/__consumer_offsets", "", 403, "INTERNAL_TOPIC", ""},
	{"POST", "/topics/orders/partitions", `{}`, 400, "MISSING_FIELD", ""},
	{"POST", "/topics/orders/partitions", `{"partitions":1}`, 400, "INVALID_PARTITIONS", ""},
	{"POST", "/topics/orders/partitions", `{"partitions":-1}`, 400, "INVALID_PARTITIONS", ""},
	{"POST", "/topics/nope/partitions", `{"partitions":8}`, 404, "UNKNOWN_TOPIC", ""},
	{"PUT", "/topics/orders/config", `{}`, 400, "MISSING_FIELD", ""},
	{"PUT", "/topics/orders/config", `{"config":{"retention.ms":null}}`, 400, "INVALID_CONFIG", ""},
	{"PATCH", "/topics/orders/config", `{"config":{"nope":"1"}}`, 400, "INVALID_CONFIG", ""},
	{"PUT", "/topics/nope/config", `{"config":{}}`, 404, "UNKNOWN_TOPIC", ""},
	{"POST", "/topics/orders/replication-factor", `{"replication_factor":0}`, 400, "INVALID_REPLICATION_FACTOR", ""},
	{"POST", "/topics/orders/replication-factor", `{"replication_factor":5}`, 400, "INVALID_REPLICATION_FACTOR", ""},
	{"POST", "/topics/orders/replication-factor", `{}`, 400, "MISSING_FIELD", ""},
	// Produce.
	{"POST", "/produce", `{}`, 400, "MISSING_FIELD", ""},
	{"POST", "/produce", `{"topic":"orders"}`, 400, "MISSING_FIELD", ""},
	{"POST", "/produce", `{"topic":"nope","message":"x"}`, 404, "UNKNOWN_TOPIC", ""},
	{"POST", "/produce", `{"topic":"orders","partition":2,"message":"x"}`, 404, "UNKNOWN_PARTITION", ""},
	{"POST", "/produce", `{"topic":"orders","partition":-1,"message":"x"}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/produce", `{"topic":"orders","partition":4294967296,"message":"x"}`, 400, "INVALID_JSON", ""},
	{"POST", "/produce", `{"topic":"orders","partition":"0","message":"x"}`, 400, "INVALID_JSON", ""},
	{"POST", "/produce", `{"topic":"orders","message":5}`, 400, "INVALID_JSON", ""},
	{"POST", "/produce", `{"topic":"orders","message":"x","acks":"2"}`, 400, "INVALID_JSON", ""},
	{"POST", "/produce", `{"topic":"orders","message":"x","acks":0}`, 400, "INVALID_JSON", ""},
	{"POST", "/produce", `{"topic":"orders","message":"x","headers":{"a":1}}`, 400, "INVALID_JSON", ""},
	{"POST", "/produce", `{"topic":"orders","message":"x","headers":[]}`, 400, "INVALID_JSON", ""},
	{"POST", "/produce", `{"topic":"orders","message":"x","timestamp":-5}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/produce", `{"topic":"orders","message":"x","timeout_ms":-1}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/produce", `{"topic":"orders","message":"x","encoding":"rot13"}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/produce", `{"topic":"orders","message":"!!","encoding":"base64"}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/produce", `{"topic":"orders","message":"a","value":"b"}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/produce", `{"topic":"orders","records":[]}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/produce", `{"topic":"orders","records":[{"key":"k"}]}`, 400, "MISSING_FIELD", ""},
	{"POST", "/produce", `{"topic":"orders","records":[{"value":"a","partition":7}]}`, 404, "UNKNOWN_PARTITION", ""},
	{"POST", "/produce", `{"topic":"orders","records":{"value":"a"}}`, 400, "INVALID_JSON", ""},
	{"POST", "/produce", `{"topic":"orders","message":"x","records":[{"value":"a"}]}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/produce", `{"topic":"__consumer_offsets","message":"x"}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/produce", `{"topic":"orders","message":"` + strings.Repeat("x", 1<<20+100) + `"}`, 413, "RECORD_TOO_LARGE", ""},
	// Fetch.
	{"GET", "/fetch", "", 400, "MISSING_FIELD", ""},
	{"GET", "/fetch?topic=orders", "", 400, "MISSING_FIELD", ""},
	{"GET", "/fetch?topic=nope&partition=0", "", 404, "UNKNOWN_TOPIC", ""},
	{"GET", "/fetch?topic=orders&partition=9", "", 404, "UNKNOWN_PARTITION", ""},
	{"GET", "/fetch?topic=orders&partition=-1", "", 400, "INVALID_ARGUMENT", ""},
	{"GET", "/fetch?topic=orders&partition=abc", "", 400, "INVALID_ARGUMENT", ""},
	{"GET", "/fetch?topic=orders&partition=99999999999", "", 400, "INVALID_ARGUMENT", ""},
	{"GET", "/fetch?topic=orders&partition=0&offset=-1", "", 400, "INVALID_ARGUMENT", ""},
	{"GET", "/fetch?topic=orders&partition=0&offset=99", "", 416, "OFFSET_OUT_OF_RANGE", ""},
	{"GET", "/fetch?topic=orders&partition=0&offset=9223372036854775807", "", 416, "OFFSET_OUT_OF_RANGE", ""},
	{"GET", "/fetch?topic=orders&partition=0&offset=99999999999999999999", "", 400, "INVALID_ARGUMENT", ""},
	{"GET", "/fetch?topic=orders&partition=0&max_records=0", "", 400, "INVALID_ARGUMENT", ""},
	{"GET", "/fetch?topic=orders&partition=0&max_bytes=-5", "", 400, "INVALID_ARGUMENT", ""},
	{"GET", "/fetch?topic=orders&partition=0&wait_ms=100000", "", 400, "INVALID_ARGUMENT", ""},
	{"GET", "/fetch?topic=orders&partition=0&encoding=hex", "", 400, "INVALID_ARGUMENT", ""},
	// Original group API.
	{"POST", "/groups/join", `{}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/join", `{"group":"g"}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/join", `{"group":" ","member_id":"m"}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/join", `{"group":"g","member_id":7}`, 400, "INVALID_JSON", ""},
	{"POST", "/groups/leave", `{"member_id":"m"}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/heartbeat", `not json`, 400, "INVALID_JSON", ""},
	{"GET", "/groups/members", "", 400, "MISSING_FIELD", ""},
	{"GET", "/groups/stale?group=g", "", 400, "MISSING_FIELD", ""},
	{"GET", "/groups/stale?group=g&timeout_ms=-1", "", 400, "INVALID_ARGUMENT", ""},
	{"GET", "/groups/stale?group=g&timeout_ms=x", "", 400, "INVALID_ARGUMENT", ""},
	{"POST", "/groups/remove-stale", `{"group":"g"}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/remove-stale", `{"group":"g","timeout_ms":"5"}`, 400, "INVALID_JSON", ""},
	{"POST", "/groups/assign", `{"topic":"orders"}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/assign", `{"topic":"orders","members":[]}`, 400, "NO_ACTIVE_MEMBERS", ""},
	{"POST", "/groups/assign", `{"topic":"orders","members":[{}]}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/assign", `{"topic":"nope","members":[{"id":"a"}]}`, 404, "UNKNOWN_TOPIC", ""},
	{"POST", "/groups/rebalance", `{"group":"g"}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/rebalance", `{"group":"empty-group","topic":"orders"}`, 400, "NO_ACTIVE_MEMBERS", ""},
	{"POST", "/groups/rebalance", `{"group":"g1","topic":"nope"}`, 404, "UNKNOWN_TOPIC", ""},
	{"POST", "/groups/cleanup-and-rebalance", `{"group":"g","topic":"orders"}`, 400, "MISSING_FIELD", ""},
	{"GET", "/groups/assignments?group=g", "", 400, "MISSING_FIELD", ""},
	{"DELETE", "/groups/assignments?topic=t", "", 400, "MISSING_FIELD", ""},
	{"POST", "/offsets/commit", `{"group":"g","topic":"orders","partition":0}`, 400, "MISSING_FIELD", ""},
	{"POST", "/offsets/commit", `{"group":"g","topic":"orders","partition":0,"offset":-1}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/offsets/commit", `{"group":"g","topic":"orders","partition":5,"offset":1}`, 404, "UNKNOWN_PARTITION", ""},
	{"POST", "/offsets/commit", `{"group":"g","topic":"nope","partition":0,"offset":1}`, 404, "UNKNOWN_TOPIC", ""},
	{"POST", "/offsets/commit", `{"group":"g","topic":"orders","partition":0,"offset":"1"}`, 400, "INVALID_JSON", ""},
	{"POST", "/offsets/commit", `{"group":"g","topic":"orders","partition":0,"offset":1,"member_id":"m"}`, 400, "INVALID_ARGUMENT", ""},
	{"GET", "/offsets?group=g&topic=orders", "", 400, "MISSING_FIELD", ""},
	{"GET", "/offsets?group=g&topic=orders&partition=x", "", 400, "INVALID_ARGUMENT", ""},
	// Generation protocol and group admin.
	{"POST", "/groups/g/join", `{}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/g/join", `{"topics":"orders"}`, 400, "INVALID_JSON", ""},
	{"POST", "/groups/g/join", `{"topics":["orders"],"session_timeout_ms":0}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/groups/g/sync", `{"member_id":"m"}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/g/sync", `{"member_id":"nobody","generation":1}`, 404, "UNKNOWN_MEMBER_ID", ""},
	{"POST", "/groups/g/heartbeat", `{"member_id":"nobody","generation":1}`, 404, "UNKNOWN_MEMBER_ID", ""},
	{"POST", "/groups/g/heartbeat", `{"member_id":"m","generation":"1"}`, 400, "INVALID_JSON", ""},
	{"POST", "/groups/g/leave", `{}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/g/leave", `{"member_id":"nobody"}`, 404, "UNKNOWN_MEMBER_ID", ""},
	{"POST", "/groups/g/offsets", `{"member_id":"m","generation":1}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/g/offsets", `{"member_id":"nobody","generation":1,"offsets":[{"topic":"orders","partition":0,"offset":1}]}`, 404, "UNKNOWN_MEMBER_ID", ""},
	{"POST", "/groups/g/offsets", `{"member_id":"m","generation":1,"offsets":[{"topic":"orders","partition":0,"offset":-2}]}`, 400, "INVALID_ARGUMENT", ""},
	{"GET", "/groups/never-seen", "", 404, "UNKNOWN_GROUP", ""},
	{"DELETE", "/groups/never-seen", "", 404, "UNKNOWN_GROUP", ""},
	{"PUT", "/groups/g/config", `{}`, 400, "MISSING_FIELD", ""},
	{"PUT", "/groups/g/config", `{"assignment_strategy":"sticky"}`, 400, "INVALID_ARGUMENT", ""},
	{"PUT", "/groups/g/config", `{"session_timeout_ms":-4}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/groups/g/reset-offsets", `{}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/g/reset-offsets", `{"to":"latest","topics":[""]}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/topics/orders/delete-records", `{}`, 400, "MISSING_FIELD", ""},
	{"POST", "/topics/orders/delete-records", `{"partitions":[]}`, 400, "MISSING_FIELD", ""},
	{"POST", "/topics/orders/delete-records", `{"partitions":[{"partition":-1,"offset":0}]}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/topics/orders/delete-records", `{"partitions":[{"partition":0,"offset":-2}]}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/topics/orders/delete-records", `{"partitions":[{"partition":0,"offset":"1"}]}`, 400, "INVALID_JSON", ""},
	{"POST", "/topics/nope/delete-records", `{"partitions":[{"partition":0,"offset":0}]}`, 404, "UNKNOWN_TOPIC", ""},
	{"POST", "/topics/orders/elect-leaders", `{"partitions":[-1]}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/topics/orders/elect-leaders", `{"partitions":[0,0]}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/topics/orders/elect-leaders", `{"partitions":"0"}`, 400, "INVALID_JSON", ""},
	{"POST", "/topics/orders/elect-leaders", ``, 400, "INVALID_JSON", ""},
	{"POST", "/topics/nope/elect-leaders", `{}`, 404, "UNKNOWN_TOPIC", ""},
	{"POST", "/topics/nope/elect-leaders", `{"partitions":[0]}`, 404, "UNKNOWN_TOPIC", ""},
	{"POST", "/topics/orders/reassignments", `{}`, 400, "MISSING_FIELD", ""},
	{"POST", "/topics/orders/reassignments", `{"partitions":[]}`, 400, "MISSING_FIELD", ""},
	{"POST", "/topics/orders/reassignments", `{"partitions":[{"replicas":[0]}]}`, 400, "MISSING_FIELD", ""},
	{"POST", "/topics/orders/reassignments", `{"partitions":[{"partition":-1,"replicas":[0]}]}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/topics/orders/reassignments", `{"partitions":[{"partition":0}]}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/topics/orders/reassignments", `{"partitions":[{"partition":0,"replicas":[0],"cancel":true}]}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/topics/orders/reassignments", `{"partitions":[{"partition":0,"replicas":[]}]}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/topics/orders/reassignments", `{"partitions":[{"partition":0,"cancel":true},{"partition":0,"cancel":true}]}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/topics/orders/reassignments", `{"partitions":[{"partition":0,"replicas":"0"}]}`, 400, "INVALID_JSON", ""},
	{"POST", "/topics/nope/reassignments", `{"partitions":[{"partition":0,"replicas":[0]}]}`, 404, "UNKNOWN_TOPIC", ""},
	{"POST", "/groups/g/delete-offsets", `{}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/g/delete-offsets", `{"partitions":[]}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/g/delete-offsets", `{"partitions":[{"topic":" ","partition":0}]}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/groups/g/delete-offsets", `{"partitions":[{"topic":"orders","partition":-1}]}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/groups/g/delete-offsets", `{"partitions":[{"topic":"orders","partition":"0"}]}`, 400, "INVALID_JSON", ""},
	{"POST", "/groups/g/reset-offsets", `{"to":"yesterday","topics":["orders"]}`, 400, "INVALID_ARGUMENT", ""},
	{"POST", "/groups/g/reset-offsets", `{"to":"offset","topics":["orders"]}`, 400, "MISSING_FIELD", ""},
	{"POST", "/groups/g/reset-offsets", `{"to":"earliest","topics":["nope"]}`, 404, "UNKNOWN_TOPIC", ""},
	{"POST", "/groups/g1/reset-offsets", `{"to":"earliest","topics":["orders"]}`, 409, "NON_EMPTY_GROUP", ""},
	{"DELETE", "/groups/g1", "", 409, "NON_EMPTY_GROUP", ""},
	// Cluster.
	{"GET", "/brokers/x", "", 400, "INVALID_ARGUMENT", ""},
	{"GET", "/brokers/-1", "", 400, "INVALID_ARGUMENT", ""},
	{"GET", "/brokers/42", "", 404, "UNKNOWN_BROKER", ""},
	{"GET", "/brokers/42/safe-to-restart", "", 404, "UNKNOWN_BROKER", ""},
	{"POST", "/brokers/42/drain", "", 404, "UNKNOWN_BROKER", ""},
	{"DELETE", "/brokers/0", "", 409, "BROKER_NOT_EMPTY", ""},
}

// TestBadInput sends every bad request and checks its status, its JSON
// error and code, and that the stored data did not change.
func TestBadInput(t *testing.T) {
	n := startSingle(t, nodeOptions{})
	n.expect(t, "POST", "/topics", `{"name":"orders","partitions":2}`, 201)
	n.expect(t, "POST", "/produce", `{"topic":"orders","partition":0,"message":"kept"}`, 200)
	n.expect(t, "POST", "/groups/join", `{"group":"g1","member_id":"m1"}`, 200)
	n.expect(t, "POST", "/offsets/commit", `{"group":"g1","topic":"orders","partition":0,"offset":1}`, 200)
	before := snapshotState(t, n)

	for _, c := range badCases {
		req, _ := http.NewRequest(c.method, n.url+c.path, strings.NewReader(c.body))
		ct := c.contentType
		if ct == "" && c.body != "" {
			ct = "application/json"
		}
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
		var body map[string]any
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		name := c.method + " " + c.path + " " + trunc(c.body)
		if err != nil {
			t.Errorf("%s: reply is not JSON: %v", name, err)
			continue
		}
		if resp.StatusCode != c.status || body["code"] != c.code {
			t.Errorf("%s: got %d %v, want %d %s", name, resp.StatusCode, body, c.status, c.code)
			continue
		}
		if msg, _ := body["error"].(string); msg == "" {
			t.Errorf("%s: no error message: %v", name, body)
		}
		if resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: content type %q", name, resp.Header.Get("Content-Type"))
		}
	}
	if after := snapshotState(t, n); after != before {
		t.Fatalf("bad requests changed stored data:\n before %s\n after  %s", before, after)
	}
}

// TestBodyTooLarge sends a body over max.request.bytes.
func TestBodyTooLarge(t *testing.T) {
	n := startSingle(t, nodeOptions{})
	n.expect(t, "POST", "/topics", `{"name":"orders"}`, 201)
	big := `{"topic":"orders","message":"` + strings.Repeat("x", 17<<20) + `"}`
	st, b := n.do(t, "POST", "/produce", big)
	if st != 413 || !strings.Contains(b, "BODY_TOO_LARGE") {
		t.Fatalf("got %d %s", st, b)
	}
	r := n.expect(t, "GET", "/fetch?topic=orders&partition=0", "", 200)
	if len(r["records"].([]any)) != 0 {
		t.Fatalf("an oversized request stored something: %v", r)
	}
}

// snapshotState is what a client can see of the data bad requests must not
// touch.
func snapshotState(t *testing.T, n *node) string {
	t.Helper()
	var parts []string
	for _, p := range []string{"/topics?internal=true", "/fetch?topic=orders&partition=0", "/fetch?topic=orders&partition=1",
		"/groups/members?group=g1", "/offsets?group=g1&topic=orders&partition=0", "/topics/orders"} {
		st, b := n.do(t, "GET", p, "")
		parts = append(parts, p+" "+http.StatusText(st)+" "+b)
	}
	return strings.Join(parts, "\n")
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
