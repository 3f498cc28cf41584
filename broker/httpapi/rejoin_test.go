package httpapi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRemovedBrokerRejoins is a scale down and up again over a kept data
// directory: broker 3 is drained, stopped and removed from the cluster and
// the quorum, then started again on its old data (its old raft state, in
// which it is still a member). It registers again as a new non-voter,
// takes replicas, and the quorum keeps working around it. A broker removed
// while it runs stays out until it is restarted.
func TestRemovedBrokerRejoins(t *testing.T) {
	c := newTestCluster(t, 4, 3, nil)
	n0 := c.nodes[0]
	n0.expect(t, "POST", "/topics", `{"name":"orders","partitions":4,"replication_factor":3}`, 201)
	waitTopic(t, c.nodes, "orders", 4)
	for p := range 4 {
		n0.expect(t, "POST", "/produce", fmt.Sprintf(`{"topic":"orders","partition":%d,"message":"before-%d","acks":"all"}`, p, p), 200)
	}

	// The operator's order: drain, stop the broker, then remove it.
	n0.expect(t, "POST", "/brokers/3/drain", "", 202)
	eventually(t, 20*time.Second, "broker 3 to be drained", func() bool {
		b := n0.expect(t, "GET", "/brokers/3", "", 200)
		return b["state"] == "drained" && b["partitions"].(float64) == 0
	})
	c.stop(3)
	n0.expect(t, "DELETE", "/brokers/3", "", 200)
	n0.expect(t, "GET", "/brokers/3", "", 404)

	// Back on the same data directory and addresses.
	c.restart(3)
	expectRejoined(t, c, 3)

	// It takes replicas again through ordinary placement: a topic with a
	// replica on every broker, and a rebalance.
	n0.expect(t, "POST", "/topics", `{"name":"wide","partitions":2,"replication_factor":4}`, 201)
	waitTopic(t, c.nodes, "wide", 2)
	n0.expect(t, "POST", "/cluster/rebalance", "", 202)
	eventually(t, 30*time.Second, "broker 3 in the ISR of every partition it holds, holding orders replicas", func() bool {
		b := n0.expect(t, "GET", "/brokers/3", "", 200)
		if b["in_sync"] != true || b["partitions"].(float64) < 3 {
			return false
		}
		for _, p := range c.describe(n0, "orders") {
			if len(p.Replicas) != 3 || len(p.ISR) != 3 || len(p.Replicas) != len(p.ISR) {
				return false
			}
		}
		for _, p := range c.describe(n0, "wide") {
			if !slices.Contains(p.ISR, 3) {
				return false
			}
		}
		return true
	})
	for p := range 2 {
		c.nodes[3].expect(t, "POST", "/produce", fmt.Sprintf(`{"topic":"wide","partition":%d,"message":"after","acks":"all"}`, p), 200)
	}
	for p := int32(0); p < 4; p++ {
		if got := fetchAll(t, c.nodes[3], "orders", p); !slices.Equal(got, []string{fmt.Sprintf("before-%d", p)}) {
			t.Fatalf("orders-%d through broker 3 after it rejoined: %v", p, got)
		}
	}

	// An ordinary restart of the rejoined broker: still a member.
	c.stop(3)
	c.restart(3)
	expectRejoined(t, c, 3)

	// Removed while it runs, a broker stays out: it does not register
	// again behind the administrator's back.
	n0.expect(t, "DELETE", "/topics/wide", "", 200)
	n0.expect(t, "POST", "/brokers/3/drain", "", 202)
	eventually(t, 20*time.Second, "broker 3 to be drained again", func() bool {
		b := n0.expect(t, "GET", "/brokers/3", "", 200)
		return b["state"] == "drained" && b["partitions"].(float64) == 0
	})
	n0.expect(t, "DELETE", "/brokers/3", "", 200)
	eventually(t, 5*time.Second, "broker 3 to report itself not ready", func() bool {
		st, _ := c.nodes[3].do(t, "GET", "/ready", "")
		return st == 503
	})
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if st, b := n0.do(t, "GET", "/brokers/3", ""); st != 404 {
			t.Fatalf("broker 3, removed while running, came back: %d %s", st, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, body := c.nodes[3].do(t, "GET", "/ready", ""); !strings.Contains(body, "removed") {
		t.Fatalf("a removed broker's /ready: %s", body)
	}
	c.stop(3)
	c.restart(3)
	expectRejoined(t, c, 3)
}

// expectRejoined checks that broker id is registered, alive, a non-voter,
// that the initial voters still vote, and that metadata changes reach it.
func expectRejoined(t *testing.T, c *testCluster, id int) {
	t.Helper()
	n0 := c.nodes[0]
	eventually(t, 20*time.Second, fmt.Sprintf("broker %d to be registered and alive", id), func() bool {
		st, body := n0.do(t, "GET", fmt.Sprintf("/brokers/%d", id), "")
		return st == 200 && strings.Contains(body, `"state":"alive"`)
	})
	for _, b := range n0.expect(t, "GET", "/brokers", "", 200)["brokers"].([]any) {
		m := b.(map[string]any)
		if m["state"] != "alive" || m["voter"] != (m["id"].(float64) < 3) {
			t.Fatalf("broker %v after broker %d rejoined: state %v, voter %v", m["id"], id, m["state"], m["voter"])
		}
	}
	ctl := n0.expect(t, "GET", "/metadata", "", 200)["controller_id"].(float64)
	if ctl < 0 || ctl >= 3 {
		t.Fatalf("controller after broker %d rejoined: %v", id, ctl)
	}
	// Its copy of the metadata follows the quorum from now on.
	name := fmt.Sprintf("probe-%d-%d", id, time.Now().UnixNano())
	n0.expect(t, "POST", "/topics", fmt.Sprintf(`{"name":%q,"partitions":1,"replication_factor":1}`, name), 201)
	waitTopic(t, []*node{c.nodes[id]}, name, 1)
	n0.expect(t, "DELETE", "/topics/"+name, "", 200)
}
