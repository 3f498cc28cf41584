package fault

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/storage"
)

const (
	topic = "fault"
	group = "fault-checker"
)

// TestKillLeaderLoop: three broker processes, acks=all producers and a
// committing consumer group running throughout, and round after round a
// SIGKILL of the produced partition's leader followed by its restart. See
// the package comment.
func TestKillLeaderLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the broker and runs three processes for about two minutes")
	}
	rounds, controllerRounds := envInt(t, "FAULT_ROUNDS", 10), envInt(t, "FAULT_CONTROLLER_ROUNDS", 3)
	// Every timeout is the broker's default; fewer offsets partitions only
	// make the start quicker.
	procs := newCluster(t, 3, "offsets.topic.num.partitions=3\n")
	startAll(t, procs)
	ctx := context.Background()
	createReplicatedTopic(t, procs, topic, 1)
	waitInSync(t, procs)

	w := newWorkload(procs, topic, group)
	w.start(4)
	stopped := false
	defer func() {
		if !stopped {
			w.stop()
		}
	}()
	time.Sleep(2 * time.Second)

	// Each round kills one broker, measures the time to the first
	// acknowledged acks=all produce sent after the kill, and restarts the
	// broker. The rounds kill the partition's leader; after them, a few
	// rounds kill the controller (the raft leader) instead, which is the
	// slower case: raft elects a new controller first, and until the
	// victim is fenced acks=all waits for it as an ISR member even when it
	// did not lead the partition.
	var failovers, controllerFailovers []time.Duration
	kill := func(r int, controllerRound bool) {
		waitInSync(t, procs)
		leader, controller := leadership(t, procs)
		victim, what := leader, "leader"
		if controllerRound {
			victim, what = controller, "controller"
		}
		if leader == controller {
			what = "leader and controller"
		}
		before := w.ackedCount()
		killed := time.Now()
		procs[victim].kill()
		took, ok := w.firstAckAfter(killed, time.Minute)
		if !ok {
			t.Fatalf("round %d: no acks=all produce succeeded within a minute of killing broker %d", r, victim)
		}
		if controllerRound {
			controllerFailovers = append(controllerFailovers, took)
		} else {
			failovers = append(failovers, took)
		}
		t.Logf("round %2d: SIGKILL of broker %d (%s); first acks=all produce acknowledged %v later (%d records acknowledged before)",
			r, victim, what, took.Round(time.Millisecond), before)
		procs[victim].start(t)
		procs[victim].waitReady(t, time.Minute)
	}
	for r := range rounds {
		kill(r+1, false)
	}
	for r := range controllerRounds {
		kill(rounds+r+1, true)
	}
	time.Sleep(time.Second)
	w.stop()
	stopped = true

	// Every broker back in the ISR, the leader's log end committed.
	waitInSync(t, procs)
	var hw int64
	eventually(t, 30*time.Second, "the high watermark to reach the log end", func() bool {
		d, err := anyClient(procs).DescribeTopic(ctx, topic)
		if err != nil {
			return false
		}
		p := d.Partitions[0]
		hw = p.HighWatermark
		return len(p.ISR) == 3 && p.HighWatermark == p.LogEndOffset
	})

	// Committed offsets survived every coordinator loss.
	w.mu.Lock()
	lastCommit, maxCommit := w.lastCommitAcked, w.maxCommitAttempted
	w.mu.Unlock()
	for _, p := range procs {
		offset, found, err := p.client.Offset(ctx, group, topic, 0)
		if err != nil {
			t.Fatalf("committed offset through broker %d: %v", p.id, err)
		}
		if !found || offset < lastCommit || offset > maxCommit {
			t.Errorf("committed offset through broker %d = %d (found %v); the last acknowledged commit was %d, the last attempted %d",
				p.id, offset, found, lastCommit, maxCommit)
		}
	}

	for _, p := range procs {
		p.stop(t)
	}
	lost, duplicated := checkReplicas(t, procs, w, hw)

	t.Logf("acknowledged records: %d (plus %d failed or timed-out attempts)", len(w.acked), w.errors)
	t.Logf("lost acknowledged records: %d, duplicated: %d", lost, duplicated)
	t.Logf("committed offset: acknowledged %d, attempted up to %d, %d failed commits", lastCommit, maxCommit, w.commitErrors)
	t.Logf("failover after SIGKILL of the partition leader (kill → first acknowledged acks=all produce), %d rounds: %s",
		len(failovers), summary(failovers))
	if len(controllerFailovers) > 0 {
		t.Logf("failover after SIGKILL of the controller, %d rounds: %s", len(controllerFailovers), summary(controllerFailovers))
	}
	if lost > 0 || duplicated > 0 {
		t.Fatalf("%d acknowledged records lost, %d duplicated", lost, duplicated)
	}
}

// anyClient returns the client of a running broker.
func anyClient(procs []*brokerProc) *client.Client {
	for _, p := range procs {
		if p.running() {
			return p.client
		}
	}
	return procs[0].client
}

// leadership returns the produced partition's leader and the controller.
func leadership(t *testing.T, procs []*brokerProc) (leader, controller int) {
	t.Helper()
	md, err := anyClient(procs).Metadata(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, td := range md.Topics {
		if td.Name == topic {
			return int(td.Partitions[0].Leader), int(md.ControllerID)
		}
	}
	t.Fatalf("topic %s missing from the metadata", topic)
	return -1, -1
}

// waitInSync waits until every broker runs and is in the partition's ISR.
func waitInSync(t *testing.T, procs []*brokerProc) {
	t.Helper()
	eventually(t, time.Minute, "all three brokers in the ISR", func() bool {
		d, err := anyClient(procs).DescribeTopic(context.Background(), topic)
		return err == nil && len(d.Partitions[0].ISR) == 3 && d.Partitions[0].Leader >= 0
	})
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkReplicas opens the partition's log in every broker's data directory
// (the brokers are stopped), checks that the replicas are byte-identical up
// to hw, and counts the acknowledged records that are not exactly once at
// their acknowledged offset.
func checkReplicas(t *testing.T, procs []*brokerProc, w *workload, hw int64) (lost, duplicated int) {
	t.Helper()
	var first []byte
	for _, p := range procs {
		l, err := storage.Open(filepath.Join(p.dataDir, topic+"-0"), storage.DefaultConfig())
		if err != nil {
			t.Fatalf("broker %d: open the replica: %v", p.id, err)
		}
		if l.LogEndOffset() < hw {
			t.Errorf("broker %d: log ends at %d, below the high watermark %d", p.id, l.LogEndOffset(), hw)
		}
		raw := readRaw(t, l, hw)
		if first == nil {
			first = raw
			lost, duplicated = checkAcked(t, l, w, hw)
		} else if !bytes.Equal(raw, first) {
			t.Errorf("broker %d: the log up to the high watermark %d differs from broker %d's (%d vs %d bytes)",
				p.id, hw, procs[0].id, len(raw), len(first))
		}
		l.Close()
	}
	t.Logf("replicas: %d bytes below the high watermark %d, identical on all %d brokers", len(first), hw, len(procs))
	return lost, duplicated
}

// readRaw returns the log's batches below hw, as stored.
func readRaw(t *testing.T, l *storage.Log, hw int64) []byte {
	t.Helper()
	var out []byte
	for off := l.LogStartOffset(); off < hw; {
		b, err := l.ReadRaw(off, hw, 1<<20)
		if err != nil {
			t.Fatalf("read raw at %d: %v", off, err)
		}
		if len(b) == 0 {
			break
		}
		out = append(out, b...)
		for rest := b; len(rest) > 0; {
			h, err := storage.ParseBatchHeader(rest)
			if err != nil {
				t.Fatalf("batch at %d: %v", off, err)
			}
			off = h.NextOffset()
			rest = rest[h.Size():]
		}
	}
	return out
}

// checkAcked reads the records below hw and checks every acknowledged one.
func checkAcked(t *testing.T, l *storage.Log, w *workload, hw int64) (lost, duplicated int) {
	t.Helper()
	byOffset := map[int64]string{}
	count := map[string]int{}
	for off := l.LogStartOffset(); off < hw; {
		recs, err := l.Read(off, hw, 1<<20, 0)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			byOffset[r.Offset] = string(r.Value)
			count[string(r.Value)]++
		}
		off = recs[len(recs)-1].Offset + 1
	}
	for value, off := range w.acked {
		switch {
		case byOffset[off] != value:
			lost++
			if lost <= 10 {
				t.Errorf("acknowledged %s at offset %d; the log has %q there", value, off, byOffset[off])
			}
		case count[value] > 1:
			duplicated++
			if duplicated <= 10 {
				t.Errorf("acknowledged %s appears %d times", value, count[value])
			}
		}
	}
	t.Logf("the log holds %d records below the high watermark; %d of them were not acknowledged (timed out or in flight at a kill)",
		len(byOffset), len(byOffset)-len(w.acked)+lost)
	return lost, duplicated
}

// summary is "median M, max X, min N" of ds.
func summary(ds []time.Duration) string {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	median := ds[len(ds)/2]
	if len(ds)%2 == 0 {
		median = (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2
	}
	return fmt.Sprintf("median %v, max %v, min %v", median.Round(time.Millisecond),
		ds[len(ds)-1].Round(time.Millisecond), ds[0].Round(time.Millisecond))
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a number ≥ 0", name, v)
	}
	return n
}
