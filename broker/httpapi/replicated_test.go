package httpapi_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestThreeBrokerReplication runs a replicated topic through a broker
// crash and restart: placement, the high watermark on leaders and
// followers, leader election from the ISR, ISR shrink and expansion,
// acks=all refused below min.insync.replicas, proxying through brokers that
// lead nothing asked, and a restarted broker catching up to byte-identical
// logs and leading its preferred partitions again.
func TestThreeBrokerReplication(t *testing.T) {
	c := newTestCluster(t, 3, 3, nil)
	n0 := c.nodes[0]
	n0.expect(t, "POST", "/topics", `{"name":"orders","partitions":6,"replication_factor":3,"config":{"min.insync.replicas":"2"}}`, 201)
	n0.expect(t, "POST", "/topics", `{"name":"strict","partitions":1,"replication_factor":3,"config":{"min.insync.replicas":"3"}}`, 201)
	waitTopic(t, c.nodes, "orders", 6)
	waitTopic(t, c.nodes, "strict", 1)

	// Placement: three distinct replicas per partition, all in sync, and
	// two leaderships per broker.
	leads := map[int32]int{}
	for _, p := range c.describe(n0, "orders") {
		r := slices.Clone(p.Replicas)
		slices.Sort(r)
		if !slices.Equal(r, []int32{0, 1, 2}) || len(p.ISR) != 3 || p.Leader != p.Replicas[0] {
			t.Fatalf("partition %d placed as %+v", p.Partition, p)
		}
		leads[p.Leader]++
	}
	if leads[0] != 2 || leads[1] != 2 || leads[2] != 2 {
		t.Fatalf("leaderships per broker: %v", leads)
	}

	// acks=all through every broker (most requests are proxied) with
	// timestamps 10 ms apart.
	const base = 1_767_000_000_000
	want := map[int32][]string{}
	for i := range 5 {
		for p := int32(0); p < 6; p++ {
			msg := fmt.Sprintf("p%d-%d", p, i)
			body := fmt.Sprintf(`{"topic":"orders","partition":%d,"message":%q,"acks":"all","timestamp":%d}`, p, msg, base+10*i)
			subset(t, "produce", c.nodes[(int(p)+i)%3].expect(t, "POST", "/produce", body, 200),
				fmt.Sprintf(`{"partition":%d,"offset":%d}`, p, i))
			want[p] = append(want[p], msg)
		}
	}
	for _, p := range c.describe(c.nodes[1], "orders") {
		if p.HighWatermark != 5 || p.LogEndOffset != 5 {
			t.Fatalf("partition %d after 5 acks=all records: HW %d, LEO %d", p.Partition, p.HighWatermark, p.LogEndOffset)
		}
	}
	// Followers learn the high watermark from their next fetch.
	for _, n := range c.nodes {
		for p := 0; p < 6; p++ {
			series := fmt.Sprintf(`kairo_high_watermark{broker="%d",partition="%d",topic="orders"}`, n.cfg.ID, p)
			eventually(t, 5*time.Second, "followers to learn the high watermark", func() bool { return metric(t, n, series) == 5 })
		}
	}

	// Reset a group's offsets to a timestamp through every broker: the
	// leaders answer from their time indexes.
	for _, n := range c.nodes {
		r := n.expect(t, "POST", "/groups/ts-group/reset-offsets",
			fmt.Sprintf(`{"to":"timestamp","timestamp":%d,"topics":["orders"]}`, base+25), 200)
		for _, o := range r["offsets"].([]any) {
			if off := o.(map[string]any)["offset"].(float64); off != 3 {
				t.Fatalf("reset to base+25 ms through broker %d: %v", n.cfg.ID, r)
			}
		}
	}

	// Crash the leader of orders-0. Its partitions move to other ISR
	// members once the controller fences it, and it leaves every ISR.
	before := c.describe(n0, "orders")
	victim := int(before[0].Leader)
	c.crash(victim)
	survivor := c.any()
	took := eventually(t, 15*time.Second, "leaderships to leave the crashed broker", func() bool {
		for _, p := range c.describe(survivor, "orders") {
			if p.Leader == int32(victim) || p.Leader < 0 || slices.Contains(p.ISR, int32(victim)) {
				return false
			}
		}
		return true
	})
	t.Logf("leaderships moved %v after broker %d crashed", took.Round(time.Millisecond), victim)
	for i, p := range c.describe(survivor, "orders") {
		if !slices.Contains(before[i].ISR, p.Leader) || p.LeaderEpoch <= before[i].LeaderEpoch && before[i].Leader == int32(victim) {
			t.Fatalf("partition %d: new leader %d (epoch %d) was not in the ISR %v (epoch %d)", i, p.Leader, p.LeaderEpoch, before[i].ISR, before[i].LeaderEpoch)
		}
	}

	// Two in-sync replicas: acks=all goes on for orders, is refused for
	// strict (min.insync.replicas 3) without writing, acks=1 is not.
	for p := int32(0); p < 6; p++ {
		msg := fmt.Sprintf("p%d-after", p)
		survivor.expect(t, "POST", "/produce", fmt.Sprintf(`{"topic":"orders","partition":%d,"message":%q,"acks":"all"}`, p, msg), 200)
		want[p] = append(want[p], msg)
	}
	r := survivor.expect(t, "POST", "/produce", `{"topic":"strict","partition":0,"message":"refused","acks":"all"}`, 503)
	subset(t, "acks=all below min ISR", r, `{"code":"NOT_ENOUGH_REPLICAS"}`)
	subset(t, "acks=1 below min ISR", survivor.expect(t, "POST", "/produce", `{"topic":"strict","partition":0,"message":"stored"}`, 200),
		`{"offset":0}`)

	// The crashed broker restarts, catches up, rejoins every ISR and gets
	// its preferred leaderships back; acks=all waits for no leadership
	// move and no leader that has yet to learn of the expanded ISR.
	c.restart(victim)
	took = c.waitSettled(30*time.Second, "orders", "strict")
	t.Logf("the restarted broker was back in every ISR and leading its preferred partitions after %v", took.Round(time.Millisecond))
	for _, p := range c.describe(c.nodes[victim], "orders") {
		if p.Leader == int32(victim) && p.LeaderEpoch <= before[p.Partition].LeaderEpoch {
			t.Fatalf("partition %d: broker %d leads again in epoch %d, not after epoch %d", p.Partition, victim, p.LeaderEpoch, before[p.Partition].LeaderEpoch)
		}
	}
	c.nodes[victim].expect(t, "POST", "/produce", `{"topic":"strict","partition":0,"message":"accepted","acks":"all"}`, 200)

	// Every broker serves every partition (proxying to its leader) with
	// each acknowledged record once at its offset, and the replicas' logs
	// are byte-identical.
	for _, n := range c.nodes {
		for p := int32(0); p < 6; p++ {
			if got := fetchAll(t, n, "orders", p); !slices.Equal(got, want[p]) {
				t.Fatalf("orders-%d through broker %d: %v, want %v", p, n.cfg.ID, got, want[p])
			}
		}
	}
	for p := int32(0); p < 6; p++ {
		eventually(t, 5*time.Second, fmt.Sprintf("orders-%d to be byte-identical on every replica", p), func() bool {
			b0 := c.logBytes(0, "orders", p)
			return len(b0) > 0 && bytes.Equal(b0, c.logBytes(1, "orders", p)) && bytes.Equal(b0, c.logBytes(2, "orders", p))
		})
	}
}

// TestFiveBrokerUncleanElectionDiscardsTheDeposedTail: five voters, so two
// brokers can be down at once. A leader left alone in the ISR takes writes
// nobody copies and crashes; the out-of-sync follower is elected uncleanly
// (the topic allows it) and takes new writes. When the old leader comes
// back it truncates its tail to where the new leader's epoch began and
// ends byte-identical with it.
func TestFiveBrokerUncleanElectionDiscardsTheDeposedTail(t *testing.T) {
	c := newTestCluster(t, 5, 5, nil)
	n0 := c.nodes[0]
	// Placement over five brokers evens out the load of all topics,
	// __consumer_offsets included: replicas and preferred leaderships per
	// broker differ by at most one.
	n0.expect(t, "POST", "/topics", `{"name":"spread","partitions":10,"replication_factor":3}`, 201)
	replicas, leads := map[int32]int{}, map[int32]int{}
	for _, topic := range []string{"spread", "__consumer_offsets"} {
		for _, p := range c.describe(n0, topic) {
			for _, r := range p.Replicas {
				replicas[r]++
			}
			leads[p.Replicas[0]]++
		}
	}
	spreadOK := func(m map[int32]int) bool {
		lo, hi := m[0], m[0]
		for id := int32(0); id < 5; id++ {
			lo, hi = min(lo, m[id]), max(hi, m[id])
		}
		return hi-lo <= 1
	}
	if !spreadOK(replicas) || !spreadOK(leads) {
		t.Fatalf("placement over five brokers: replicas %v, preferred leaders %v", replicas, leads)
	}

	n0.expect(t, "POST", "/topics", `{"name":"tail","partitions":1,"replication_factor":2,"config":{"unclean.leader.election.enable":"true"}}`, 201)
	waitTopic(t, c.nodes, "tail", 1)
	p := c.describe(n0, "tail")[0]
	leader, follower := int(p.Leader), int(p.Replicas[1])
	for i := range 3 {
		n0.expect(t, "POST", "/produce", fmt.Sprintf(`{"topic":"tail","partition":0,"message":"committed-%d","acks":"all"}`, i), 200)
	}

	c.crash(follower)
	other := c.any(leader, follower)
	eventually(t, 15*time.Second, "the ISR to shrink to the leader", func() bool {
		return slices.Equal(c.describe(other, "tail")[0].ISR, []int32{int32(leader)})
	})
	for i := range 3 {
		subset(t, "unreplicated", other.expect(t, "POST", "/produce", fmt.Sprintf(`{"topic":"tail","partition":0,"message":"tail-%d"}`, i), 200),
			fmt.Sprintf(`{"offset":%d}`, 3+i))
	}

	c.crash(leader)
	c.restart(follower)
	eventually(t, 15*time.Second, "the out-of-sync follower to be elected", func() bool {
		return c.describe(other, "tail")[0].Leader == int32(follower)
	})
	for i := range 2 {
		subset(t, "new leader", other.expect(t, "POST", "/produce", fmt.Sprintf(`{"topic":"tail","partition":0,"message":"new-%d","acks":"all"}`, i), 200),
			fmt.Sprintf(`{"offset":%d}`, 3+i))
	}

	c.restart(leader)
	eventually(t, 15*time.Second, "the deposed leader to rejoin the ISR", func() bool {
		return len(c.describe(other, "tail")[0].ISR) == 2
	})
	want := []string{"committed-0", "committed-1", "committed-2", "new-0", "new-1"}
	for _, n := range c.nodes {
		if got := fetchAll(t, n, "tail", 0); !slices.Equal(got, want) {
			t.Fatalf("tail through broker %d: %v, want %v", n.cfg.ID, got, want)
		}
	}
	eventually(t, 5*time.Second, "the deposed leader's log to match the new leader's", func() bool {
		return bytes.Equal(c.logBytes(leader, "tail", 0), c.logBytes(follower, "tail", 0))
	})
	if bytes.Contains(c.logBytes(leader, "tail", 0), []byte("tail-")) {
		t.Fatal("the unreplicated tail is still on the deposed leader's disk")
	}
}

// TestNonVoterJoinsThenDrainAndRemove: a fourth broker joins three voters
// as a non-voter, receives replicas, is drained (its replicas move to the
// others with their data) and removed.
func TestNonVoterJoinsThenDrainAndRemove(t *testing.T) {
	c := newTestCluster(t, 4, 3, nil)
	n0 := c.nodes[0]
	bs := n0.expect(t, "GET", "/brokers", "", 200)["brokers"].([]any)
	if len(bs) != 4 {
		t.Fatalf("brokers: %v", bs)
	}
	for _, b := range bs {
		m := b.(map[string]any)
		if m["state"] != "alive" || m["voter"] != (m["id"].(float64) < 3) {
			t.Fatalf("broker %v: state %v, voter %v", m["id"], m["state"], m["voter"])
		}
	}

	n0.expect(t, "POST", "/topics", `{"name":"orders","partitions":8,"replication_factor":2}`, 201)
	waitTopic(t, c.nodes, "orders", 8)
	held := 0
	for _, p := range c.describe(n0, "orders") {
		if slices.Contains(p.Replicas, 3) {
			held++
		}
	}
	if held == 0 {
		t.Fatal("the non-voter received no replica")
	}
	want := map[int32][]string{}
	for p := int32(0); p < 8; p++ {
		for i := range 3 {
			msg := fmt.Sprintf("p%d-%d", p, i)
			c.nodes[3].expect(t, "POST", "/produce", fmt.Sprintf(`{"topic":"orders","partition":%d,"message":%q,"acks":"all"}`, p, msg), 200)
			want[p] = append(want[p], msg)
		}
	}

	// Removing a broker that holds replicas is refused; draining moves
	// them, and then it can go.
	subset(t, "remove before drain", n0.expect(t, "DELETE", "/brokers/3", "", 409), `{"code":"BROKER_NOT_EMPTY"}`)
	c.nodes[1].expect(t, "POST", "/brokers/3/drain", "", 202)
	eventually(t, 20*time.Second, "broker 3 to be drained", func() bool {
		b := n0.expect(t, "GET", "/brokers/3", "", 200)
		return b["state"] == "drained" && b["partitions"].(float64) == 0
	})
	for _, p := range c.describe(n0, "orders") {
		if len(p.Replicas) != 2 || slices.Contains(p.Replicas, 3) || len(p.ISR) != 2 {
			t.Fatalf("partition %d after the drain: %+v", p.Partition, p)
		}
	}
	n0.expect(t, "DELETE", "/brokers/3", "", 200)
	c.stop(3)
	if bs := n0.expect(t, "GET", "/brokers", "", 200)["brokers"].([]any); len(bs) != 3 {
		t.Fatalf("brokers after removal: %v", bs)
	}
	// A replica that became leader in the drain learns the high watermark
	// from its followers' next fetches, so the last acknowledged record
	// may show a moment later; every one must show.
	for _, n := range c.nodes[:3] {
		for p := int32(0); p < 8; p++ {
			eventually(t, 10*time.Second, fmt.Sprintf("orders-%d through broker %d to hold %v after the drain", p, n.cfg.ID, want[p]), func() bool {
				return slices.Equal(fetchAll(t, n, "orders", p), want[p])
			})
		}
	}
}
