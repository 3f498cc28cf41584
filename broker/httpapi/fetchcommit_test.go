package httpapi_test

import (
	"fmt"
	"testing"
	"time"
)

// TestProduceThenFetchOnAReplicatedTopic is the README's flow on a
// three-replica partition: an acks=1 produce answers once the leader has
// the record, before the followers do, and a fetch right after it with
// the default wait_ms=0 must still return that record. The fetch waits for
// the high watermark to cover records that exist but are not committed
// yet; a fetch at the log end still answers at once.
func TestProduceThenFetchOnAReplicatedTopic(t *testing.T) {
	c := newTestCluster(t, 3, 3, nil)
	c.nodes[0].expect(t, "POST", "/topics", `{"name":"orders","partitions":1,"replication_factor":3,"config":{"min.insync.replicas":"2"}}`, 201)
	waitTopic(t, c.nodes, "orders", 1)
	leader := c.describe(c.nodes[0], "orders")[0].Leader

	for i := range 100 {
		// Through the leader and through the other brokers (proxied), as a
		// port-forward to the client Service lands on any of them.
		n := c.nodes[i%3]
		msg := fmt.Sprintf("hello-%d", i)
		r := n.expect(t, "POST", "/produce", fmt.Sprintf(`{"topic":"orders","partition":0,"message":%q}`, msg), 200)
		off := int64(r["offset"].(float64))
		f := n.expect(t, "GET", fmt.Sprintf("/fetch?topic=orders&partition=0&offset=%d", off), "", 200)
		recs := f["records"].([]any)
		if len(recs) == 0 {
			t.Fatalf("round %d through broker %d (leader %d): produce stored offset %d, the fetch right after it returned no record: %v",
				i, n.cfg.ID, leader, off, f)
		}
		got := recs[0].(map[string]any)
		if got["message"] != msg || int64(got["offset"].(float64)) != off {
			t.Fatalf("round %d: fetch at offset %d returned %v, want %q", i, off, got, msg)
		}
	}

	// At the log end there is nothing to wait for: wait_ms=0 answers at once.
	hw := c.describe(c.nodes[0], "orders")[0].HighWatermark
	for _, n := range c.nodes {
		start := time.Now()
		f := n.expect(t, "GET", fmt.Sprintf("/fetch?topic=orders&partition=0&offset=%d", hw), "", 200)
		if took := time.Since(start); took > time.Second {
			t.Fatalf("an empty fetch at the log end through broker %d took %v", n.cfg.ID, took)
		}
		if recs := f["records"].([]any); len(recs) != 0 {
			t.Fatalf("fetch at the log end returned %v", recs)
		}
	}
}
