package httpapi_test

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestDeleteRecords: POST /topics/{name}/delete-records through a broker
// that leads none of the partitions moves each one's log start on its
// leader and answers each partition on its own. The records below are
// gone for fetches at once, and stay gone on the leader elected when the
// old one crashes right after the answer: every in-sync replica had
// deleted them before it was given.
func TestDeleteRecords(t *testing.T) {
	c := newTestCluster(t, 3, 3, nil)
	n0 := c.nodes[0]
	n0.expect(t, "POST", "/topics", `{"name":"orders","partitions":2,"replication_factor":3,"config":{"min.insync.replicas":"2"}}`, 201)
	waitTopic(t, c.nodes, "orders", 2)
	for i := range 10 {
		n0.expect(t, "POST", "/produce", fmt.Sprintf(`{"topic":"orders","partition":0,"message":"p0-%d","acks":"all"}`, i), 200)
	}
	for i := range 5 {
		n0.expect(t, "POST", "/produce", fmt.Sprintf(`{"topic":"orders","partition":1,"message":"p1-%d","acks":"all"}`, i), 200)
	}
	parts := c.describe(n0, "orders")
	leader := int(parts[0].Leader)
	via := c.any(leader, int(parts[1].Leader))

	r := via.expect(t, "POST", "/topics/orders/delete-records",
		`{"partitions":[{"partition":0,"offset":4},{"partition":1,"offset":-1},{"partition":7,"offset":0}]}`, 200)
	sameJSON(t, "delete-records", r, `{"name":"orders","partitions":[{"partition":0,"low_watermark":4},{"partition":1,"low_watermark":5},`+
		`{"partition":7,"error":"topic \"orders\" has no partition 7 (it has 2)","code":"UNKNOWN_PARTITION"}]}`)
	r = via.expect(t, "POST", "/topics/orders/delete-records", `{"partitions":[{"partition":0,"offset":11},{"partition":0,"offset":2}]}`, 400)
	subset(t, "a partition twice", r, `{"code":"INVALID_ARGUMENT"}`)
	r = via.expect(t, "POST", "/topics/orders/delete-records", `{"partitions":[{"partition":0,"offset":11}]}`, 200)
	parts0 := r["partitions"].([]any)[0].(map[string]any)
	if parts0["code"] != "OFFSET_OUT_OF_RANGE" || parts0["low_watermark"] != nil {
		t.Fatalf("an offset above the high watermark: %v", r)
	}
	via.expect(t, "POST", "/topics/nope/delete-records", `{"partitions":[{"partition":0,"offset":1}]}`, 404)

	// The old leader crashes at once: the new one holds none of the
	// deleted records either.
	c.crash(leader)
	survivor := c.any(leader)
	eventually(t, 15*time.Second, "a new leader of orders-0", func() bool {
		p := c.describe(survivor, "orders")[0]
		return p.Leader >= 0 && p.Leader != int32(leader)
	})
	for _, n := range c.nodes {
		if n == nil {
			continue // the crashed one
		}
		r := n.expect(t, "GET", "/fetch?topic=orders&partition=0&offset=3", "", 416)
		subset(t, "fetch below the log start", r, `{"code":"OFFSET_OUT_OF_RANGE"}`)
		if p := c.describe(n, "orders"); p[0].LogStartOffset != 4 || p[1].LogStartOffset != 5 {
			t.Fatalf("log starts through broker %d after the leader crashed: %d, %d", n.cfg.ID, p[0].LogStartOffset, p[1].LogStartOffset)
		}
		r = n.expect(t, "GET", "/fetch?topic=orders&partition=0&offset=4&max_records=100", "", 200)
		var got []string
		for _, rec := range r["records"].([]any) {
			got = append(got, rec.(map[string]any)["message"].(string))
		}
		if want := []string{"p0-4", "p0-5", "p0-6", "p0-7", "p0-8", "p0-9"}; !slices.Equal(got, want) {
			t.Fatalf("orders-0 from the log start through broker %d: %v, want %v", n.cfg.ID, got, want)
		}
	}
}
