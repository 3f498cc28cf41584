package httpapi_test

import (
	"fmt"
	"testing"
)

// TestElectLeaders: POST /topics/{name}/elect-leaders answers every
// partition of a topic whose preferred replicas lead with
// ELECTION_NOT_NEEDED and the leader, and a partition the topic lacks
// with UNKNOWN_PARTITION, in the order asked.
func TestElectLeaders(t *testing.T) {
	c := newTestCluster(t, 3, 3, nil)
	n0 := c.nodes[0]
	n0.expect(t, "POST", "/topics", `{"name":"orders","partitions":2,"replication_factor":3}`, 201)
	waitTopic(t, c.nodes, "orders", 2)
	parts := c.describe(n0, "orders")
	want := `{"name":"orders","partitions":[`
	for i, p := range parts {
		if p.Leader != p.Replicas[0] {
			t.Fatalf("partition %d of a new topic led by %d, replicas %v", i, p.Leader, p.Replicas)
		}
		if i > 0 {
			want += ","
		}
		want += fmt.Sprintf(`{"partition":%d,"leader":%d,"error":"the preferred replica leads already","code":"ELECTION_NOT_NEEDED"}`, i, p.Leader)
	}
	r := c.nodes[1].expect(t, "POST", "/topics/orders/elect-leaders", `{}`, 200)
	sameJSON(t, "elect-leaders", r, want+"]}")

	r = c.nodes[2].expect(t, "POST", "/topics/orders/elect-leaders", `{"partitions":[7,1]}`, 200)
	sameJSON(t, "elect-leaders of two partitions", r, fmt.Sprintf(`{"name":"orders","partitions":[`+
		`{"partition":7,"error":"topic \"orders\" has no partition 7","code":"UNKNOWN_PARTITION"},`+
		`{"partition":1,"leader":%d,"error":"the preferred replica leads already","code":"ELECTION_NOT_NEEDED"}]}`, parts[1].Leader))
}
