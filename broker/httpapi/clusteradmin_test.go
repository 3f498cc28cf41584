package httpapi_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"
)

// TestMetadataAsksEachLeaderOnce: /metadata describes every topic with the
// leaders' offsets, asking each other broker once, however many topics
// there are.
func TestMetadataAsksEachLeaderOnce(t *testing.T) {
	c := newTestCluster(t, 3, 3, nil)
	n0 := c.nodes[0]
	const topics = 12
	for i := range topics {
		name := fmt.Sprintf("topic-%02d", i)
		n0.expect(t, "POST", "/topics", fmt.Sprintf(`{"name":%q,"partitions":3,"replication_factor":2}`, name), 201)
		for p := 0; p < 3; p++ {
			n0.expect(t, "POST", "/produce", fmt.Sprintf(`{"topic":%q,"partition":%d,"message":"x","acks":"all"}`, name, p), 200)
		}
	}
	const path = "/internal/broker/partitions"
	before := []int{c.nodes[1].requests.count(path), c.nodes[2].requests.count(path)}
	md := n0.expect(t, "GET", "/metadata", "", 200)
	for i, n := range c.nodes[1:] {
		if got := n.requests.count(path) - before[i]; got != 1 {
			t.Errorf("broker %d was asked %d times for partition offsets by one /metadata, want once", n.cfg.ID, got)
		}
	}
	seen := 0
	for _, tv := range md["topics"].([]any) {
		td := tv.(map[string]any)
		if td["internal"].(bool) {
			continue
		}
		seen++
		for _, pv := range td["partitions"].([]any) {
			p := pv.(map[string]any)
			if p["high_watermark"].(float64) != 1 || p["log_end_offset"].(float64) != 1 || p["size_bytes"].(float64) <= 0 {
				t.Fatalf("%s-%v led by %v: %v", td["name"], p["partition"], p["leader"], p)
			}
		}
	}
	if seen != topics {
		t.Fatalf("/metadata shows %d topics, want %d", seen, topics)
	}
}

// TestListGroupsIsPartialWhenABrokerDoesNotAnswer: GET /groups answers with
// the groups of the brokers that answered, says the list is partial and
// names the broker that did not.
func TestListGroupsIsPartialWhenABrokerDoesNotAnswer(t *testing.T) {
	c := newTestCluster(t, 3, 3, nil)
	n0 := c.nodes[0]
	n0.expect(t, "POST", "/topics", `{"name":"orders","partitions":1}`, 201)
	// Enough groups that every broker coordinates some, once the
	// preferred-leader election has spread the coordinators.
	var offsets []partitionView
	eventually(t, 20*time.Second, "coordinators on their preferred brokers", func() bool {
		offsets = c.describe(n0, "__consumer_offsets")
		for _, p := range offsets {
			if p.Leader != p.Replicas[0] {
				return false
			}
		}
		return true
	})
	coordinators := map[float64][]string{}
	for i := 0; len(coordinators) < 3 && i < 200; i++ {
		g := fmt.Sprint("group-", i)
		n0.expect(t, "POST", "/offsets/commit", fmt.Sprintf(`{"group":%q,"topic":"orders","partition":0,"offset":1}`, g), 200)
		p := javaPartition(g, int32(len(offsets)))
		leader := float64(offsets[p].Leader)
		coordinators[leader] = append(coordinators[leader], g)
	}
	if len(coordinators) < 3 {
		t.Fatalf("groups only on coordinators %v", coordinators)
	}
	all := n0.expect(t, "GET", "/groups", "", 200)
	if _, ok := all["partial"]; ok || len(all["groups"].([]any)) != len(coordinators[0])+len(coordinators[1])+len(coordinators[2]) {
		t.Fatalf("complete list: %v", all)
	}

	// Broker 2 keeps running but stops answering on its peer listener,
	// where the others ask it for its groups.
	c.nodes[2].peerSrv.CloseClientConnections()
	c.nodes[2].b.ClosePeerStreams()
	c.nodes[2].peerSrv.Listener.Close()
	start := time.Now()
	r := n0.expect(t, "GET", "/groups", "", 200)
	t.Logf("partial list after %v", time.Since(start).Round(time.Millisecond))
	subset(t, "partial list", r, `{"partial":true,"unavailable_brokers":[2]}`)
	var names []string
	for _, g := range r["groups"].([]any) {
		names = append(names, g.(map[string]any)["group"].(string))
	}
	for _, id := range []float64{0, 1} {
		for _, g := range coordinators[id] {
			if !slices.Contains(names, g) {
				t.Fatalf("group %s of broker %v missing from the partial list %v", g, id, names)
			}
		}
	}
	for _, g := range coordinators[2] {
		if slices.Contains(names, g) {
			t.Fatalf("group %s of the silent broker listed", g)
		}
	}
}

// javaPartition is groupPartition of the broker: abs(String.hashCode) % n.
func javaPartition(g string, n int32) int32 {
	var h int32
	for _, r := range g {
		h = 31*h + r
	}
	if h < 0 {
		h = -h
	}
	return h % n
}

// TestSafeToRestartShape: GET /brokers/{id}/safe-to-restart answers the
// shape docs/api.md gives, every key present and the lists never null, and
// names the partition whose replica count can never keep
// min.insync.replicas through a restart.
func TestSafeToRestartShape(t *testing.T) {
	n := startSingle(t, nodeOptions{})
	n.expect(t, "POST", "/topics", `{"name":"orders","partitions":1,"replication_factor":1}`, 201)
	got := n.expect(t, "GET", "/brokers/0/safe-to-restart", "", 200)
	keys := slices.Sorted(maps.Keys(got))
	if !slices.Equal(keys, []string{"blocking", "broker", "reasons", "safe"}) {
		t.Fatalf("keys %v, want blocking, broker, reasons, safe: %v", keys, got)
	}
	subset(t, "safe-to-restart", got, `{"broker":0,"safe":true,"blocking":[]}`)
	reasons, _ := got["reasons"].([]any)
	want := "orders-0 has 1 replicas and min.insync.replicas 1: acks=all writes stop while broker 0 is down"
	if !slices.Contains(reasons, any(want)) {
		t.Fatalf("reasons %v do not name %q", reasons, want)
	}
}

// TestBrokersShape: GET /brokers and GET /brokers/{id} answer the broker
// docs/api.md describes, every key present, with its own id (7, not a
// zero value), counting the replicas the broker holds and leads.
func TestBrokersShape(t *testing.T) {
	n := startSingle(t, nodeOptions{id: 7})
	n.expect(t, "POST", "/topics", `{"name":"orders","partitions":2,"replication_factor":1}`, 201)
	one := n.expect(t, "GET", "/brokers/7", "", 200)
	keys := slices.Sorted(maps.Keys(one))
	want := []string{"address", "id", "in_sync", "leaders", "partitions", "rack", "state", "under_replicated", "voter"}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys %v, want %v: %v", keys, want, one)
	}
	// orders' two partitions and the three of __consumer_offsets.
	subset(t, "GET /brokers/7", one,
		`{"id":7,"state":"alive","voter":true,"partitions":5,"leaders":5,"under_replicated":0,"in_sync":true}`)
	all := n.expect(t, "GET", "/brokers", "", 200)
	sameJSON(t, "GET /brokers", all, `{"brokers":[`+mustJSON(one)+`]}`)
}
