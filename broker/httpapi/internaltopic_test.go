package httpapi_test

import (
	"net/http"
	"testing"
)

// TestInternalTopicRefusesChanges sends every request that would change
// __consumer_offsets' config, partition count, replication factor or
// existence: each is
// refused with 403 INTERNAL_TOPIC (deleting its records too), and the committed offsets, the config
// and the partitions stay as they were.
func TestInternalTopicRefusesChanges(t *testing.T) {
	n := startSingle(t, nodeOptions{})
	n.expect(t, "POST", "/topics", `{"name":"orders"}`, 201)
	n.expect(t, "POST", "/produce", `{"topic":"orders","partition":0,"message":"kept"}`, 200)
	n.expect(t, "POST", "/offsets/commit", `{"group":"g1","topic":"orders","partition":0,"offset":1}`, 200)
	before := n.expect(t, "GET", "/topics/__consumer_offsets", "", 200)

	for _, c := range []struct{ method, path, body string }{
		{"PATCH", "/topics/__consumer_offsets/config", `{"config":{"retention.ms":"1"}}`},
		{"PATCH", "/topics/__consumer_offsets/config", `{"config":{"retention.ms":null}}`},
		{"PUT", "/topics/__consumer_offsets/config", `{"config":{}}`},
		{"PUT", "/topics/__consumer_offsets/config", `{"config":{"retention.ms":"1"}}`},
		{"POST", "/topics/__consumer_offsets/partitions", `{"partitions":200}`},
		{"POST", "/topics/__consumer_offsets/replication-factor", `{"replication_factor":1}`},
		{"POST", "/topics/__consumer_offsets/replication-factor", `{"replication_factor":2}`},
		{"DELETE", "/topics/__consumer_offsets", ``},
		{"POST", "/topics/__consumer_offsets/delete-records", `{"partitions":[{"partition":0,"offset":-1}]}`},
	} {
		r := n.expect(t, c.method, c.path, c.body, http.StatusForbidden)
		if r["code"] != "INTERNAL_TOPIC" || r["error"] == "" {
			t.Errorf("%s %s %s: %v", c.method, c.path, c.body, r)
		}
	}

	after := n.expect(t, "GET", "/topics/__consumer_offsets", "", 200)
	sameJSON(t, "config", after["config"], mustJSON(before["config"]))
	if a, b := len(after["partitions"].([]any)), len(before["partitions"].([]any)); a != b {
		t.Fatalf("partitions: %d, before %d", a, b)
	}
	r := n.expect(t, "GET", "/offsets?group=g1&topic=orders&partition=0", "", 200)
	subset(t, "committed offset", r, `{"offset":1}`)
}
