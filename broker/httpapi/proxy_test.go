package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/cluster"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/internal/heldport"
)

// startCluster starts n voters and waits until every one is ready.
func startCluster(t *testing.T, n int) []*node {
	t.Helper()
	skipClusterWhenShort(t)
	var voters []cluster.Voter
	rafts := make([]string, n)
	for i := range rafts {
		rafts[i] = heldport.Reserve(t)
		voters = append(voters, cluster.Voter{ID: i, Address: rafts[i]})
	}
	nodes := make([]*node, n)
	for i := range nodes {
		nodes[i] = startNode(t, nodeOptions{id: int32(i), voters: voters, raft: rafts[i]})
	}
	for _, nd := range nodes {
		nd.waitReady(t)
	}
	return nodes
}

// waitTopic waits until every broker's metadata shows the topic with a
// leader for each partition (metadata reaches brokers asynchronously).
func waitTopic(t *testing.T, nodes []*node, topic string, partitions int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for _, nd := range nodes {
		for {
			st, b := nd.do(t, "GET", "/topics/"+topic, "")
			if st == 200 && strings.Count(b, `"leader":-1`) == 0 && strings.Count(b, `"partition":`) == partitions {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("broker %d does not show %s: %d %s", nd.cfg.ID, topic, st, b)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestProxying produces to and fetches from every partition through every
// broker, and runs group requests through brokers that do not coordinate
// the group: each answer must be the leader's or coordinator's.
func TestProxying(t *testing.T) {
	nodes := startCluster(t, 3)
	nodes[0].expect(t, "POST", "/topics", `{"name":"orders","partitions":6,"replication_factor":2}`, 201)
	waitTopic(t, nodes, "orders", 6)
	desc := nodes[1].expect(t, "GET", "/topics/orders", "", 200)
	leaders := map[float64]bool{}
	for _, p := range desc["partitions"].([]any) {
		leaders[p.(map[string]any)["leader"].(float64)] = true
	}
	if len(leaders) < 2 {
		t.Fatalf("partitions not spread over brokers: %v", desc)
	}

	// Every broker writes one record to every partition.
	for i, nd := range nodes {
		for p := 0; p < 6; p++ {
			r := nd.expect(t, "POST", "/produce", fmt.Sprintf(`{"topic":"orders","partition":%d,"message":"from-%d","acks":"all"}`, p, i), 200)
			subset(t, "produce", r, fmt.Sprintf(`{"status":"stored","partition":%d,"offset":%d}`, p, i))
		}
	}
	// Every broker reads them back, in order.
	for _, nd := range nodes {
		for p := 0; p < 6; p++ {
			checkRecords(t, nd.expect(t, "GET", fmt.Sprintf("/fetch?topic=orders&partition=%d&offset=0", p), "", 200),
				`[{"offset":0,"message":"from-0"},{"offset":1,"message":"from-1"},{"offset":2,"message":"from-2"}]`)
		}
	}

	// A keyed batch through one broker lands where Kafka's partitioner says,
	// each partition's records as one batch on its leader.
	keys := []string{"user-1", "user-2", "user-3", "user-4", "user-5", "user-6", "user-7", "user-8"}
	var recs []string
	for _, k := range keys {
		recs = append(recs, fmt.Sprintf(`{"key":%q,"value":"v-%s","headers":{"h":"x"}}`, k, k))
	}
	r := nodes[2].expect(t, "POST", "/produce", `{"topic":"orders","acks":"all","records":[`+strings.Join(recs, ",")+`]}`, 200)
	positions := r["records"].([]any)
	for i, k := range keys {
		want := kafkaPartition(k, 6)
		got := int32(positions[i].(map[string]any)["partition"].(float64))
		if got != want {
			t.Errorf("key %s went to partition %d, Kafka's partitioner says %d", k, got, want)
		}
		off := int64(positions[i].(map[string]any)["offset"].(float64))
		f := nodes[0].expect(t, "GET", fmt.Sprintf("/fetch?topic=orders&partition=%d&offset=%d&max_records=1", got, off), "", 200)
		rec := f["records"].([]any)[0].(map[string]any)
		if rec["key"] != k || rec["message"] != "v-"+k || rec["headers"].(map[string]any)["h"] != "x" {
			t.Errorf("record of key %s read back as %v", k, rec)
		}
	}

	// A request another broker already forwarded (it arrives on the peer
	// listener) is refused, not forwarded again. On the client port the
	// peer transport's headers mean nothing: such a request is proxied
	// as any other.
	peers := peer.NewClient(testSecret).HTTPClient()
	for p := 0; p < 6; p++ {
		for i, nd := range nodes {
			leader := desc["partitions"].([]any)[p].(map[string]any)["leader"].(float64)
			path := fmt.Sprintf("/fetch?topic=orders&partition=%d&offset=0", p)
			req, _ := http.NewRequest("POST", "http://"+nd.cfg.PeerAdvertise+peer.PathPrefix+"core/fetch",
				strings.NewReader(fmt.Sprintf(`{"topic":"orders","partition":%d,"offset":0}`, p)))
			req.Header.Set(peer.HeaderForwarded, "1")
			resp, err := peers.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if want := map[bool]int{true: 200, false: 503}[float64(i) == leader]; resp.StatusCode != want {
				t.Errorf("forwarded fetch of partition %d on broker %d (leader %v): status %d, want %d", p, i, leader, resp.StatusCode, want)
			}
			req, _ = http.NewRequest("GET", nd.url+path, nil)
			req.Header.Set(peer.HeaderForwarded, "1")
			req.Header.Set(peer.HeaderLeaderEpoch, "999")
			resp, err = httpClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("client fetch of partition %d on broker %d with peer headers: status %d", p, i, resp.StatusCode)
			}
		}
	}

	// Groups: membership through one broker, rebalance through another, read
	// through the third.
	nodes[0].expect(t, "POST", "/groups/join", `{"group":"analytics-workers","member_id":"member-a"}`, 200)
	nodes[1].expect(t, "POST", "/groups/join", `{"group":"analytics-workers","member_id":"member-b"}`, 200)
	want := `{"group":"analytics-workers","assignments":[{"member_id":"member-a","topics":[{"topic":"orders","partitions":[0,1,2]}]},{"member_id":"member-b","topics":[{"topic":"orders","partitions":[3,4,5]}]}]}`
	sameJSON(t, "rebalance", nodes[2].expect(t, "POST", "/groups/rebalance", `{"group":"analytics-workers","topic":"orders"}`, 200), want)
	for _, nd := range nodes {
		sameJSON(t, "members", ids(nd.expect(t, "GET", "/groups/members?group=analytics-workers", "", 200)["members"]), `[{"id":"member-a"},{"id":"member-b"}]`)
		nd.expect(t, "POST", "/offsets/commit", `{"group":"analytics-workers","topic":"orders","partition":3,"offset":2}`, 200)
		subset(t, "offset", nd.expect(t, "GET", "/offsets?group=analytics-workers&topic=orders&partition=3", "", 200), `{"offset":2,"found":true}`)
	}
	list := nodes[1].expect(t, "GET", "/groups", "", 200)
	if g := list["groups"].([]any); len(g) != 1 || g[0].(map[string]any)["group"] != "analytics-workers" {
		t.Fatalf("groups: %v", list)
	}
	d := nodes[2].expect(t, "GET", "/groups/analytics-workers", "", 200)
	if d["total_lag"].(float64) != 1 { // partition 3: HW 3 (+ keyed records), committed 2
		lag := d["offsets"].([]any)[0].(map[string]any)
		if lag["committed_offset"].(float64) != 2 || lag["lag"].(float64) != lag["high_watermark"].(float64)-2 {
			t.Fatalf("describe: %v", d)
		}
	}
	md := nodes[1].expect(t, "GET", "/metadata", "", 200)
	if len(md["brokers"].([]any)) != 3 {
		t.Fatalf("metadata: %v", md)
	}
}
