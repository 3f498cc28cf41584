package httpapi_test

import (
	"testing"
	"time"
)

// TestSeedAPIExamples checks every request/response example of the original
// broker's API reference, and its idempotency rules.
func TestSeedAPIExamples(t *testing.T) {
	clk := &clock{}
	n := startSingle(t, nodeOptions{clock: clk})
	sameJSON(t, "health", n.expect(t, "GET", "/health", "", 200), `{"status":"ok"}`)
	subset(t, "create", n.expect(t, "POST", "/topics", `{"name":"orders","partitions":3}`, 201), `{"status":"created","name":"orders","partitions":3}`)
	n.expect(t, "POST", "/topics", `{"name":"payments","partitions":4}`, 201)
	sameJSON(t, "list", n.expect(t, "GET", "/topics", "", 200), `{"topics":["orders","payments"]}`)

	subset(t, "produce", n.expect(t, "POST", "/produce", `{"topic":"orders","partition":0,"message":"created order 123"}`, 200), `{"status":"stored","offset":0}`)
	checkRecords(t, n.expect(t, "GET", "/fetch?topic=orders&partition=0&offset=0", "", 200), `[{"offset":0,"message":"created order 123"}]`)

	sameJSON(t, "commit", n.expect(t, "POST", "/offsets/commit", `{"group":"analytics-workers","topic":"orders","partition":0,"offset":42}`, 200), `{"status":"committed"}`)
	sameJSON(t, "offset found", n.expect(t, "GET", "/offsets?group=analytics-workers&topic=orders&partition=0", "", 200),
		`{"group":"analytics-workers","topic":"orders","partition":0,"offset":42,"found":true}`)
	sameJSON(t, "offset not found", n.expect(t, "GET", "/offsets?group=analytics-workers&topic=orders&partition=1", "", 200),
		`{"group":"analytics-workers","topic":"orders","partition":1,"offset":0,"found":false}`)

	twoMembers := `[{"member_id":"member-a","topics":[{"topic":"payments","partitions":[0,1]}]},
		{"member_id":"member-b","topics":[{"topic":"payments","partitions":[2,3]}]}]`
	sameJSON(t, "assign", n.expect(t, "POST", "/groups/assign", `{"topic":"payments","members":[{"id":"member-b"},{"id":"member-a"}]}`, 200),
		`{"assignments":`+twoMembers+`}`)
	sameJSON(t, "assign saves nothing", n.expect(t, "GET", "/groups/assignments?group=analytics-workers&topic=payments", "", 200),
		`{"group":"analytics-workers","topic":"payments","found":false,"assignments":[]}`)

	// Membership: duplicate joins, heartbeat creating a member, leaving a
	// missing member.
	for _, m := range []string{"member-b", "member-a", "member-a"} {
		sameJSON(t, "join", n.expect(t, "POST", "/groups/join", `{"group":"analytics-workers","member_id":"`+m+`"}`, 200), `{"status":"joined"}`)
	}
	sameJSON(t, "leave missing", n.expect(t, "POST", "/groups/leave", `{"group":"analytics-workers","member_id":"nobody"}`, 200), `{"status":"left"}`)
	sameJSON(t, "heartbeat creates", n.expect(t, "POST", "/groups/heartbeat", `{"group":"other","member_id":"solo"}`, 200), `{"status":"heartbeat recorded"}`)
	sameJSON(t, "created by heartbeat", ids(n.expect(t, "GET", "/groups/members?group=other", "", 200)["members"]), `[{"id":"solo"}]`)
	sameJSON(t, "leave", n.expect(t, "POST", "/groups/leave", `{"group":"other","member_id":"solo"}`, 200), `{"status":"left"}`)
	sameJSON(t, "members of an empty group", n.expect(t, "GET", "/groups/members?group=other", "", 200), `{"group":"other","members":[]}`)
	sameJSON(t, "members", ids(n.expect(t, "GET", "/groups/members?group=analytics-workers", "", 200)["members"]), `[{"id":"member-a"},{"id":"member-b"}]`)

	sameJSON(t, "rebalance", n.expect(t, "POST", "/groups/rebalance", `{"group":"analytics-workers","topic":"payments"}`, 200),
		`{"group":"analytics-workers","assignments":`+twoMembers+`}`)
	sameJSON(t, "saved", n.expect(t, "GET", "/groups/assignments?group=analytics-workers&topic=payments", "", 200),
		`{"group":"analytics-workers","topic":"payments","found":true,"assignments":`+twoMembers+`}`)
	for i := 0; i < 2; i++ { // deleting a missing assignment is idempotent
		sameJSON(t, "delete saved", n.expect(t, "DELETE", "/groups/assignments?group=analytics-workers&topic=payments", "", 200),
			`{"status":"deleted","group":"analytics-workers","topic":"payments"}`)
	}
	sameJSON(t, "deleted", n.expect(t, "GET", "/groups/assignments?group=analytics-workers&topic=payments", "", 200),
		`{"group":"analytics-workers","topic":"payments","found":false,"assignments":[]}`)
	sameJSON(t, "membership survives delete", ids(n.expect(t, "GET", "/groups/members?group=analytics-workers", "", 200)["members"]), `[{"id":"member-a"},{"id":"member-b"}]`)

	// Stale members: member-a last seen 6 minutes ago, b and c just now.
	clk.Advance(6 * time.Minute)
	n.expect(t, "POST", "/groups/heartbeat", `{"group":"analytics-workers","member_id":"member-b"}`, 200)
	n.expect(t, "POST", "/groups/join", `{"group":"analytics-workers","member_id":"member-c"}`, 200)
	stale := n.expect(t, "GET", "/groups/stale?group=analytics-workers&timeout_ms=300000", "", 200)
	subset(t, "stale", stale, `{"group":"analytics-workers","timeout_ms":300000}`)
	sameJSON(t, "stale members", ids(stale["members"]), `[{"id":"member-a"}]`)
	sameJSON(t, "stale of a missing group", n.expect(t, "GET", "/groups/stale?group=nope&timeout_ms=300000", "", 200),
		`{"group":"nope","timeout_ms":300000,"members":[]}`)
	sameJSON(t, "cleanup-and-rebalance", n.expect(t, "POST", "/groups/cleanup-and-rebalance",
		`{"group":"analytics-workers","topic":"payments","timeout_ms":300000}`, 200),
		`{"group":"analytics-workers","topic":"payments","timeout_ms":300000,"removed_members":[{"id":"member-a"}],
		  "assignments":[{"member_id":"member-b","topics":[{"topic":"payments","partitions":[0,1]}]},
		                 {"member_id":"member-c","topics":[{"topic":"payments","partitions":[2,3]}]}]}`)

	// remove-stale, then cleanup-and-rebalance with nobody left is a 400.
	clk.Advance(6 * time.Minute)
	n.expect(t, "POST", "/groups/heartbeat", `{"group":"analytics-workers","member_id":"member-c"}`, 200)
	sameJSON(t, "remove-stale", n.expect(t, "POST", "/groups/remove-stale", `{"group":"analytics-workers","timeout_ms":300000}`, 200),
		`{"group":"analytics-workers","timeout_ms":300000,"removed_members":[{"id":"member-b"}]}`)
	clk.Advance(6 * time.Minute)
	r := n.expect(t, "POST", "/groups/cleanup-and-rebalance", `{"group":"analytics-workers","topic":"payments","timeout_ms":300000}`, 400)
	subset(t, "nobody left", r, `{"code":"NO_ACTIVE_MEMBERS"}`)
}

// TestBackgroundCleanupRebalances checks the background loop: stale members
// go, saved assignments are recomputed over the rest, and deleted when
// nobody is left.
func TestBackgroundCleanupRebalances(t *testing.T) {
	clk := &clock{}
	n := startSingle(t, nodeOptions{clock: clk})
	n.expect(t, "POST", "/topics", `{"name":"orders","partitions":4}`, 201)
	n.expect(t, "POST", "/groups/join", `{"group":"g","member_id":"member-a"}`, 200)
	n.expect(t, "POST", "/groups/join", `{"group":"g","member_id":"member-b"}`, 200)
	n.expect(t, "POST", "/groups/rebalance", `{"group":"g","topic":"orders"}`, 200)
	clk.Advance(4 * time.Minute)
	n.expect(t, "POST", "/groups/heartbeat", `{"group":"g","member_id":"member-b"}`, 200)
	clk.Advance(2 * time.Minute) // a: 6 min unseen; b: 2 min
	n.b.CleanupStaleMembers(t.Context())
	sameJSON(t, "after one stale", n.expect(t, "GET", "/groups/assignments?group=g&topic=orders", "", 200),
		`{"group":"g","topic":"orders","found":true,"assignments":[{"member_id":"member-b","topics":[{"topic":"orders","partitions":[0,1,2,3]}]}]}`)
	clk.Advance(6 * time.Minute)
	n.b.CleanupStaleMembers(t.Context())
	sameJSON(t, "after all stale", n.expect(t, "GET", "/groups/assignments?group=g&topic=orders", "", 200),
		`{"group":"g","topic":"orders","found":false,"assignments":[]}`)
	sameJSON(t, "members", n.expect(t, "GET", "/groups/members?group=g", "", 200), `{"group":"g","members":[]}`)
}
