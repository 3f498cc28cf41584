package httpapi_test

import (
	"fmt"
	"testing"
	"time"
)

// TestPeerRequestsMetric: kairo_peer_requests_total counts, by operation,
// the requests other brokers send a broker's peer listener — here the
// followers' replica fetch sessions to the broker leading every partition
// of a replicated topic, which keep coming while the topic is idle.
func TestPeerRequestsMetric(t *testing.T) {
	c := newTestCluster(t, 3, 3, nil)
	n0 := c.nodes[0]
	n0.expect(t, "POST", "/topics", `{"name":"idle","partitions":1,"replication_factor":3}`, 201)
	waitTopic(t, c.nodes, "idle", 1)
	c.waitSettled(30*time.Second, "idle")
	leader := c.describe(n0, "idle")[0].Leader
	series := fmt.Sprintf(`kairo_peer_requests_total{broker="%d",op="replica/fetch-session"}`, leader)
	first := metric(t, c.nodes[leader], series)
	if first < 2 {
		t.Fatalf("%s = %v with two followers in sync, want at least 2", series, first)
	}
	// The followers' long polls end every replica.fetch.wait.max.ms and
	// start again.
	eventually(t, 10*time.Second, series+" to grow", func() bool {
		return metric(t, c.nodes[leader], series) > first
	})
}
