package fault

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/storage"
)

// TestRecreateTopicWhileAway: three brokers, a topic with 100 records; one
// broker is away — stopped with SIGSTOP, or killed with SIGKILL — while the
// topic is deleted, then continued or restarted, and the topic is created
// again under the same name at once and given 5 records, while the
// returning broker's metadata may still be catching up (the deletion
// answers only once the away broker is fenced, and the topic needs three
// live brokers). However the away broker's stale replica comes back, the
// new topic must hold exactly its own 5 records at offsets 0-4 on every
// broker, the high watermark must be 5, and no fetch through any broker
// may ever return a record of the deleted topic.
func TestRecreateTopicWhileAway(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the broker and runs three processes")
	}
	procs := newCluster(t, 3, "offsets.topic.num.partitions=1\n")
	startAll(t, procs)
	cases := []struct {
		name string
		// leader: the away broker leads the partition (else a follower
		// that is not the controller is chosen).
		leader bool
		// kill: SIGKILL and restart instead of SIGSTOP and SIGCONT.
		kill bool
	}{
		{name: "pause-leader", leader: true},
		{name: "pause-follower"},
		{name: "kill-leader", leader: true, kill: true},
		{name: "kill-follower", kill: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recreateWhileAway(t, procs, "recreated-"+tc.name, tc.leader, tc.kill)
		})
	}
	// A replica that kept the old log under the new topic may not show
	// while it follows; on disk it does.
	for _, p := range procs {
		p.stop(t)
	}
	for _, tc := range cases {
		for _, p := range procs {
			var got []string
			for _, r := range readPartition(t, p, "recreated-"+tc.name) {
				got = append(got, fmt.Sprintf("%d:%s", r.Offset, r.Value))
			}
			if want := "0:new-0 1:new-1 2:new-2 3:new-3 4:new-4"; strings.Join(got, " ") != want {
				t.Errorf("%s: broker %d's replica on disk holds %v; want %s", tc.name, p.id, got, want)
			}
		}
	}
}

func recreateWhileAway(t *testing.T, procs []*brokerProc, name string, leaderAway, kill bool) {
	ctx := context.Background()
	part := int32(0)
	produce := func(via *brokerProc, value string, acks string) {
		t.Helper()
		eventually(t, 30*time.Second, "produce "+value, func() bool {
			_, err := via.client.Produce(ctx, client.ProduceRequest{Topic: name, Partition: &part, Message: value,
				Acks: acks, TimeoutMs: 2000})
			return err == nil
		})
	}
	eventually(t, 30*time.Second, "the topic to be created", func() bool {
		_, err := anyClient(procs).CreateTopic(ctx, api.CreateTopicRequest{Name: name, Partitions: 1, ReplicationFactor: 3})
		return err == nil
	})
	waitISR(t, procs, name, 3)
	for i := range 100 {
		produce(procs[i%3], fmt.Sprintf("old-%d", i), client.AcksAll)
	}
	waitISR(t, procs, name, 3)

	// The away broker stays away longer than the session timeout: it is
	// fenced, and the new topic's replicas are placed while it is away. A
	// follower that is not the controller is chosen, or the leader, which
	// may be the controller too.
	leader, controller := partitionLeadership(t, procs, name)
	victim := -1
	for _, p := range procs {
		if leaderAway && p.id == leader || !leaderAway && p.id != leader && p.id != controller {
			victim = p.id
		}
	}
	if victim < 0 {
		t.Fatalf("no broker to take away (leader %d, controller %d)", leader, controller)
	}
	var live []*brokerProc
	for _, p := range procs {
		if p.id != victim {
			live = append(live, p)
		}
	}
	how := "SIGSTOP"
	if kill {
		how = "SIGKILL"
		procs[victim].kill()
	} else {
		procs[victim].pause(t)
	}
	t.Logf("broker %d away (%s; leader %d, controller %d)", victim, how, leader, controller)
	// The deletion answers once the away broker is fenced (it cannot say
	// it has applied the deletion); from then on no broker serves the
	// topic.
	start := time.Now()
	if err := live[0].client.DeleteTopic(ctx, name); err != nil {
		t.Fatal(err)
	}
	t.Logf("deleted in %v", time.Since(start).Round(time.Millisecond))
	for _, p := range live {
		checkNoOld(t, p, name)
	}

	// Back, it is unfenced at its first heartbeat, before its metadata
	// has caught up; the topic is created again at once (it takes three
	// live brokers) and given five records. Meanwhile every broker is
	// read from, the returning one first of all.
	if kill {
		procs[victim].start(t)
	} else {
		procs[victim].resume(t)
	}
	t.Logf("broker %d back", victim)
	reads := make(chan struct{})
	readsDone := make(chan struct{})
	go func() {
		defer close(readsDone)
		for {
			select {
			case <-reads:
				return
			default:
			}
			for _, p := range []*brokerProc{procs[victim], live[0], live[1]} {
				checkNoOld(t, p, name)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	defer func() {
		close(reads)
		<-readsDone
	}()
	eventually(t, 30*time.Second, "the topic to be created again", func() bool {
		_, err := live[1].client.CreateTopic(ctx, api.CreateTopicRequest{Name: name, Partitions: 1, ReplicationFactor: 3})
		return err == nil
	})
	for i := range 5 {
		produce(live[i%2], fmt.Sprintf("new-%d", i), client.AcksLeader)
	}

	// Once every replica is in the ISR, the five new records are the
	// topic, through every broker.
	eventually(t, 30*time.Second, "the re-created topic with 3 in-sync replicas and high watermark 5", func() bool {
		d, err := anyClient(procs).DescribeTopic(ctx, name)
		return err == nil && len(d.Partitions[0].ISR) == 3 && d.Partitions[0].HighWatermark == 5
	})
	want := "0:new-0 1:new-1 2:new-2 3:new-3 4:new-4"
	for _, p := range procs {
		resp, err := p.client.Fetch(ctx, client.FetchRequest{Topic: name, Partition: 0, Offset: 0})
		if err != nil {
			t.Fatalf("fetch through broker %d: %v", p.id, err)
		}
		var got []string
		for _, r := range resp.Records {
			got = append(got, fmt.Sprintf("%d:%s", r.Offset, r.Message))
		}
		if strings.Join(got, " ") != want || resp.HighWatermark != 5 {
			t.Errorf("fetch through broker %d: %v, high watermark %d; want %s, high watermark 5", p.id, got, resp.HighWatermark, want)
		}
	}
}

// checkNoOld fetches the topic from offset 0 through broker p and fails the
// test if any record of the deleted topic comes back.
func checkNoOld(t *testing.T, p *brokerProc, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := p.client.Fetch(ctx, client.FetchRequest{Topic: name, Partition: 0, Offset: 0, MaxRecords: 200})
	if err != nil {
		return // out of range, not leader, not ready: nothing served
	}
	for _, r := range resp.Records {
		if strings.HasPrefix(r.Message, "old-") {
			t.Errorf("broker %d served %q at offset %d of the deleted topic (high watermark %d)", p.id, r.Message, r.Offset, resp.HighWatermark)
			return
		}
	}
}

// waitISR waits until the topic's partition 0 has a leader and n in-sync
// replicas.
func waitISR(t *testing.T, procs []*brokerProc, name string, n int) {
	t.Helper()
	eventually(t, time.Minute, fmt.Sprintf("%d brokers in the ISR of %s", n, name), func() bool {
		d, err := anyClient(procs).DescribeTopic(context.Background(), name)
		return err == nil && len(d.Partitions[0].ISR) == n && d.Partitions[0].Leader >= 0
	})
}

// partitionLeadership returns the leader of name's partition 0 and the
// controller.
func partitionLeadership(t *testing.T, procs []*brokerProc, name string) (leader, controller int) {
	t.Helper()
	md, err := anyClient(procs).Metadata(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, td := range md.Topics {
		if td.Name == name {
			return int(td.Partitions[0].Leader), int(md.ControllerID)
		}
	}
	t.Fatalf("topic %s missing from the metadata", name)
	return -1, -1
}

// readPartition reads every record of name's partition 0 from broker p's
// data directory (p is stopped).
func readPartition(t *testing.T, p *brokerProc, name string) []storage.Record {
	t.Helper()
	l, err := storage.Open(filepath.Join(p.dataDir, name+"-0"), storage.DefaultConfig())
	if err != nil {
		t.Fatalf("broker %d: open the replica: %v", p.id, err)
	}
	defer l.Close()
	var out []storage.Record
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		recs, err := l.Read(off, l.LogEndOffset(), 1<<20, 0)
		if err != nil {
			t.Fatalf("broker %d: read at %d: %v", p.id, off, err)
		}
		if len(recs) == 0 {
			break
		}
		out = append(out, recs...)
		off = recs[len(recs)-1].Offset + 1
	}
	return out
}
