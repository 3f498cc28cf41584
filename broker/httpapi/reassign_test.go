package httpapi_test

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestReassignPartitions: POST /topics/{name}/reassignments through any
// broker moves a partition onto the broker that had no replica of it,
// answering the replicas it now has (the target, then the one leaving);
// the move completes once the new replica is in sync. A partition the
// topic lacks, replicas on an unknown broker and a cancellation with
// nothing in progress are answered with their codes and change nothing.
func TestReassignPartitions(t *testing.T) {
	c := newTestCluster(t, 3, 3, nil)
	n0 := c.nodes[0]
	n0.expect(t, "POST", "/topics", `{"name":"orders","partitions":2,"replication_factor":2}`, 201)
	waitTopic(t, c.nodes, "orders", 2)
	for i := range 5 {
		n0.expect(t, "POST", "/produce", fmt.Sprintf(`{"topic":"orders","partition":0,"message":"m%d","acks":"all"}`, i), 200)
	}
	old := c.describe(n0, "orders")[0].Replicas
	var spare int32
	for id := range int32(3) {
		if !slices.Contains(old, id) {
			spare = id
		}
	}
	body := fmt.Sprintf(`{"partitions":[{"partition":0,"replicas":[%d,%d]},{"partition":7,"replicas":[0]},`+
		`{"partition":1,"replicas":[0,9]},{"partition":1,"cancel":true}]}`, spare, old[0])
	// Partition 1 twice: the whole request is refused.
	n0.expect(t, "POST", "/topics/orders/reassignments", body, 400)
	body = fmt.Sprintf(`{"partitions":[{"partition":0,"replicas":[%d,%d]},{"partition":7,"replicas":[0]},{"partition":1,"replicas":[0,9]}]}`, spare, old[0])
	r := c.nodes[1].expect(t, "POST", "/topics/orders/reassignments", body, 200)
	sameJSON(t, "reassignments", r, fmt.Sprintf(`{"name":"orders","partitions":[`+
		`{"partition":0,"replicas":[%d,%d,%d],"adding":[%d],"removing":[%d]},`+
		`{"partition":7,"error":"unknown partition: orders-7","code":"UNKNOWN_PARTITION"},`+
		`{"partition":1,"error":"orders-1: invalid replica assignment: replica on unknown broker 9","code":"INVALID_ARGUMENT"}]}`,
		spare, old[0], old[1], spare, old[1]))
	r = c.nodes[2].expect(t, "POST", "/topics/orders/reassignments", `{"partitions":[{"partition":1,"cancel":true}]}`, 200)
	sameJSON(t, "cancel with nothing in progress", r,
		`{"name":"orders","partitions":[{"partition":1,"error":"no reassignment in progress: orders-1","code":"NO_REASSIGNMENT_IN_PROGRESS"}]}`)

	eventually(t, 15*time.Second, "partition 0 on its new replicas, in sync", func() bool {
		p := c.describe(n0, "orders")[0]
		return slices.Equal(p.Replicas, []int32{spare, old[0]}) && len(p.ISR) == 2 && len(p.Adding) == 0
	})
	r = n0.expect(t, "GET", "/fetch?topic=orders&partition=0&offset=0&max_records=10", "", 200)
	if recs, _ := r["records"].([]any); len(recs) != 5 {
		t.Fatalf("fetch after the move: %v", r)
	}
}
