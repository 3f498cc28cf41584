package httpapi_test

import (
	"testing"
	"time"

	"github.com/kairolog/kairolog/internal/heldport"
)

// TestSeedDemoFlow runs the original broker's manual demo (steps 2–11) with
// its exact requests and checks its exact replies, then restarts the broker
// on the same data directory and checks what step 11 says must persist. The
// 35 s wait of step 7 moves the membership clock instead of sleeping.
func TestSeedDemoFlow(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{}
	raft, httpAddr := heldport.Reserve(t), heldport.Reserve(t)
	n := startSingle(t, nodeOptions{dataDir: dir, raft: raft, http: httpAddr, clock: clk})

	// 2. Health.
	sameJSON(t, "health", n.expect(t, "GET", "/health", "", 200), `{"status":"ok"}`)

	// 3. Create a topic with four partitions; list topics.
	subset(t, "create", n.expect(t, "POST", "/topics", `{"name":"orders","partitions":4}`, 201),
		`{"status":"created","name":"orders","partitions":4,"replication_factor":1}`)
	sameJSON(t, "topics", n.expect(t, "GET", "/topics", "", 200), `{"topics":["orders"]}`)

	// 4. Join two members (twice: joins are idempotent); list them.
	for i := 0; i < 2; i++ {
		sameJSON(t, "join a", n.expect(t, "POST", "/groups/join", `{"group":"analytics-workers","member_id":"member-a"}`, 200), `{"status":"joined"}`)
		sameJSON(t, "join b", n.expect(t, "POST", "/groups/join", `{"group":"analytics-workers","member_id":"member-b"}`, 200), `{"status":"joined"}`)
	}
	members := n.expect(t, "GET", "/groups/members?group=analytics-workers", "", 200)
	if members["group"] != "analytics-workers" {
		t.Fatalf("members: %v", members)
	}
	sameJSON(t, "members", ids(members["members"]), `[{"id":"member-a"},{"id":"member-b"}]`)
	for _, m := range members["members"].([]any) {
		if _, err := time.Parse(time.RFC3339, m.(map[string]any)["last_seen"].(string)); err != nil {
			t.Fatalf("last_seen is not RFC 3339: %v", m)
		}
	}

	// 5. Rebalance.
	twoMembers := `[{"member_id":"member-a","topics":[{"topic":"orders","partitions":[0,1]}]},
		{"member_id":"member-b","topics":[{"topic":"orders","partitions":[2,3]}]}]`
	sameJSON(t, "rebalance", n.expect(t, "POST", "/groups/rebalance", `{"group":"analytics-workers","topic":"orders"}`, 200),
		`{"group":"analytics-workers","assignments":`+twoMembers+`}`)

	// 6. Saved assignments.
	sameJSON(t, "saved", n.expect(t, "GET", "/groups/assignments?group=analytics-workers&topic=orders", "", 200),
		`{"group":"analytics-workers","topic":"orders","found":true,"assignments":`+twoMembers+`}`)

	// 7. 35 s pass; only member-b heartbeats; cleanup-and-rebalance at 30 s.
	clk.Advance(35 * time.Second)
	sameJSON(t, "heartbeat", n.expect(t, "POST", "/groups/heartbeat", `{"group":"analytics-workers","member_id":"member-b"}`, 200),
		`{"status":"heartbeat recorded"}`)
	oneMember := `[{"member_id":"member-b","topics":[{"topic":"orders","partitions":[0,1,2,3]}]}]`
	sameJSON(t, "cleanup-and-rebalance", n.expect(t, "POST", "/groups/cleanup-and-rebalance",
		`{"group":"analytics-workers","topic":"orders","timeout_ms":30000}`, 200),
		`{"group":"analytics-workers","topic":"orders","timeout_ms":30000,"removed_members":[{"id":"member-a"}],"assignments":`+oneMember+`}`)
	sameJSON(t, "saved after cleanup", n.expect(t, "GET", "/groups/assignments?group=analytics-workers&topic=orders", "", 200),
		`{"group":"analytics-workers","topic":"orders","found":true,"assignments":`+oneMember+`}`)

	// 8. Produce two records.
	subset(t, "produce 1", n.expect(t, "POST", "/produce", `{"topic":"orders","partition":0,"message":"created order 123"}`, 200),
		`{"status":"stored","offset":0}`)
	subset(t, "produce 2", n.expect(t, "POST", "/produce", `{"topic":"orders","partition":0,"message":"created order 456"}`, 200),
		`{"status":"stored","offset":1}`)

	// 9. Fetch from 0 and from 1.
	checkRecords(t, n.expect(t, "GET", "/fetch?topic=orders&partition=0&offset=0", "", 200),
		`[{"offset":0,"message":"created order 123"},{"offset":1,"message":"created order 456"}]`)
	checkRecords(t, n.expect(t, "GET", "/fetch?topic=orders&partition=0&offset=1", "", 200),
		`[{"offset":1,"message":"created order 456"}]`)

	// 10. Commit and read an offset.
	sameJSON(t, "commit", n.expect(t, "POST", "/offsets/commit", `{"group":"analytics-workers","topic":"orders","partition":0,"offset":2}`, 200),
		`{"status":"committed"}`)
	offset := `{"group":"analytics-workers","topic":"orders","partition":0,"offset":2,"found":true}`
	sameJSON(t, "offset", n.expect(t, "GET", "/offsets?group=analytics-workers&topic=orders&partition=0", "", 200), offset)
	before := n.expect(t, "GET", "/groups/members?group=analytics-workers", "", 200)

	// 11. Stop and restart on the same data directory.
	n.stop()
	n = startSingle(t, nodeOptions{dataDir: dir, raft: raft, http: httpAddr, clock: clk})
	sameJSON(t, "topics after restart", n.expect(t, "GET", "/topics", "", 200), `{"topics":["orders"]}`)
	sameJSON(t, "saved after restart", n.expect(t, "GET", "/groups/assignments?group=analytics-workers&topic=orders", "", 200),
		`{"group":"analytics-workers","topic":"orders","found":true,"assignments":`+oneMember+`}`)
	sameJSON(t, "offset after restart", n.expect(t, "GET", "/offsets?group=analytics-workers&topic=orders&partition=0", "", 200), offset)
	sameJSON(t, "members and last_seen after restart", n.expect(t, "GET", "/groups/members?group=analytics-workers", "", 200), mustJSON(before))
	checkRecords(t, n.expect(t, "GET", "/fetch?topic=orders&partition=0&offset=0", "", 200),
		`[{"offset":0,"message":"created order 123"},{"offset":1,"message":"created order 456"}]`)
	subset(t, "produce after restart", n.expect(t, "POST", "/produce", `{"topic":"orders","partition":0,"message":"after restart"}`, 200),
		`{"status":"stored","offset":2}`)
}

// checkRecords compares the offset and message of each fetched record.
func checkRecords(t *testing.T, reply map[string]any, want string) {
	t.Helper()
	var got []map[string]any
	for _, r := range reply["records"].([]any) {
		m := r.(map[string]any)
		got = append(got, map[string]any{"offset": m["offset"], "message": m["message"]})
	}
	sameJSON(t, "records", got, want)
}
