package fault

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/storage"
)

// nemesisFault is one thing the nemesis does to one broker.
type nemesisFault struct {
	name string
	// do takes the broker away and returns how to bring it back.
	do func(t *testing.T, p *brokerProc) (back func())
}

// nemesisFaults: SIGKILL and a restart a moment later, and SIGSTOP for
// shorter and for longer than the session timeout (2.5 s: the longer
// pause is fenced, its leaderships move; the shorter one is not).
var nemesisFaults = []nemesisFault{
	{"SIGKILL, restart after 2 s", func(t *testing.T, p *brokerProc) func() {
		p.kill()
		time.Sleep(2 * time.Second)
		return func() { p.start(t) }
	}},
	{"SIGSTOP for 1.5 s", func(t *testing.T, p *brokerProc) func() {
		p.pause(t)
		time.Sleep(1500 * time.Millisecond)
		return func() { p.resume(t) }
	}},
	{"SIGSTOP for 5 s", func(t *testing.T, p *brokerProc) func() {
		p.pause(t)
		time.Sleep(5 * time.Second)
		return func() { p.resume(t) }
	}},
}

// TestNemesis runs three broker processes under load (nemesis_load_test.go)
// while a nemesis takes one broker at a time away — SIGKILL, or SIGSTOP
// shorter or longer than the session timeout — for NEMESIS_SECONDS
// (default 90), a topic is deleted and created again all along, and
// records with two-day-old timestamps meet a one-hour retention, and
// another topic has its oldest records deleted (DeleteRecords). Then:
// every replica has rejoined the ISR, every acknowledged record is at its
// offset exactly once (read from every replica's files), no acknowledged
// record of a deleted topic, and no record below an answered deletion,
// was ever served or is left on a replica's disk, the log start offset never
// passed the high watermark, and no reply was a 5xx other than a
// retriable 503. The counts are logged.
func TestNemesis(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the broker and runs three processes for about two and a half minutes")
	}
	seconds := envInt(t, "NEMESIS_SECONDS", 90)
	procs := newCluster(t, 3, "offsets.topic.num.partitions=1\nlog.retention.check.interval.ms=1000\n")
	startAll(t, procs)
	ctx := context.Background()
	for _, spec := range []api.CreateTopicRequest{
		{Name: mainTopic, Partitions: mainPartitions, ReplicationFactor: 3, Config: map[string]string{"min.insync.replicas": "2"}},
		// Segments roll every 2 s and hold only records two days old, so
		// retention deletes each as soon as the high watermark passes it.
		{Name: agedTopic, Partitions: 1, ReplicationFactor: 3, Config: map[string]string{"min.insync.replicas": "2",
			"retention.ms": "3600000", "segment.ms": "2000"}},
		{Name: trimmedTopic, Partitions: 1, ReplicationFactor: 3, Config: map[string]string{"min.insync.replicas": "2",
			"segment.ms": "2000"}},
	} {
		if _, err := procs[0].client.CreateTopic(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{mainTopic, agedTopic, trimmedTopic} {
		waitAllInSync(t, procs, name, time.Minute)
	}

	load := newNemesisLoad(procs)
	load.start()
	stopped := false
	defer func() {
		if !stopped {
			load.stop()
		}
	}()
	end := time.Now().Add(time.Duration(seconds) * time.Second)
	counts := map[string]int{}
	for round := 0; time.Now().Before(end); round++ {
		f := nemesisFaults[round%len(nemesisFaults)]
		victim := procs[rand.IntN(len(procs))]
		t.Logf("%5.1fs: broker %d: %s", time.Until(end).Seconds(), victim.id, f.name)
		back := f.do(t, victim)
		back()
		victim.waitReady(t, time.Minute)
		counts[f.name]++
		time.Sleep(time.Second)
	}
	load.stop()
	stopped = true

	// Every replica back in the ISR, every log end committed.
	hws := map[string]int64{}
	eventually(t, 2*time.Minute, "every replica of every partition in the ISR, high watermark at the log end", func() bool {
		for _, name := range []string{mainTopic, agedTopic, trimmedTopic, churnTopic, "__consumer_offsets"} {
			d, err := anyClient(procs).DescribeTopic(ctx, name)
			if name == churnTopic && api.IsCode(err, api.CodeUnknownTopic) {
				continue // the load stopped between a deletion and the next creation
			}
			if err != nil {
				return false
			}
			for _, p := range d.Partitions {
				if len(p.ISR) != len(p.Replicas) || p.Leader < 0 || p.HighWatermark != p.LogEndOffset {
					return false
				}
				hws[fmt.Sprintf("%s-%d", name, p.Partition)] = p.HighWatermark
			}
		}
		return true
	})
	for _, p := range procs {
		p.stop(t)
	}

	// Every acknowledged record, at its offset, exactly once, on every
	// replica's disk.
	var lost, duplicated int
	for part := range int32(mainPartitions) {
		dir := fmt.Sprintf("%s-%d", mainTopic, part)
		l, d := checkOnDisk(t, procs, dir, hws[dir], load.main, part, false)
		lost, duplicated = lost+l, duplicated+d
	}
	agedDir := agedTopic + "-0"
	agedLost, agedDup := checkOnDisk(t, procs, agedDir, hws[agedDir], load.aged, 0, true)
	lost, duplicated = lost+agedLost, duplicated+agedDup
	lost, duplicated = lost+load.churnLost, duplicated+load.churnDup
	trimmedDir := trimmedTopic + "-0"
	trimmedLost, trimmedDup := checkOnDisk(t, procs, trimmedDir, hws[trimmedDir], load.trim.acked, 0, true)
	lost, duplicated = lost+trimmedLost, duplicated+trimmedDup
	resurrectedOnDisk := checkDeletedOnDisk(t, procs, trimmedDir, load.trim.start)

	r := load.replies
	t.Logf("faults: %v", counts)
	t.Logf("acknowledged records: %d on %s, %d on %s (two days old; retention deletes them once replicated), %d in %d incarnations of %s",
		len(load.main), mainTopic, len(load.aged), agedTopic, load.churnAckedSum, load.churnRounds, churnTopic)
	t.Logf("%d on %s, %d deletions of its oldest records answered (up to offset %d), %d fetches below them",
		len(load.trim.acked), trimmedTopic, load.trim.deletions, load.trim.start, load.trim.checked)
	t.Logf("lost: %d, duplicated: %d, resurrected: %d (of a deleted topic), %d (below a deletion, fetched), %d (below a deletion, on a replica's disk), misplaced in a fetch: %d, log start past the high watermark: %d",
		lost, duplicated, len(load.resurrected), len(load.trim.resurrected), resurrectedOnDisk, len(load.misplaced), len(load.startPastHW))
	t.Logf("replies: %d answered, %d retriable 503s, %d other 5xx; %d requests without a reply (broker killed or paused)",
		r.ok.Load(), r.unavailable.Load(), len(r.bad), r.noReply.Load())
	for name, list := range map[string][]string{"resurrected": load.resurrected, "resurrected below a deletion": load.trim.resurrected,
		"misplaced":                         load.misplaced,
		"log start past the high watermark": load.startPastHW, "5xx other than 503": r.bad, "churn step stuck": load.stuck} {
		for i, s := range list {
			if i == 5 {
				t.Errorf("%s: … %d more", name, len(list)-5)
				break
			}
			t.Errorf("%s: %s", name, s)
		}
	}
	if lost > 0 || duplicated > 0 {
		t.Errorf("%d acknowledged records lost, %d duplicated", lost, duplicated)
	}
	if load.churnRounds < 3 || len(load.main) == 0 || len(load.aged) == 0 || load.trim.deletions < 3 || load.trim.checked == 0 {
		t.Errorf("too little happened to show anything: %d incarnations of %s, %d + %d acknowledged records, %d deletions and %d fetches of %s",
			load.churnRounds, churnTopic, len(load.main), len(load.aged), load.trim.deletions, load.trim.checked, trimmedTopic)
	}
}

// checkDeletedOnDisk counts the replicas of partition directory dir (the
// brokers are stopped) whose log starts below start, the largest low
// watermark a deletion was answered with: they still hold records every
// replica was to have deleted.
func checkDeletedOnDisk(t *testing.T, procs []*brokerProc, dir string, start int64) (resurrected int) {
	t.Helper()
	for _, p := range procs {
		l, err := storage.Open(filepath.Join(p.dataDir, dir), storage.DefaultConfig())
		if err != nil {
			t.Fatalf("broker %d: open %s: %v", p.id, dir, err)
		}
		if ls := l.LogStartOffset(); ls < start {
			resurrected++
			t.Errorf("broker %d: %s starts at %d, below the deletion up to %d", p.id, dir, ls, start)
		}
		l.Close()
	}
	return resurrected
}

// waitAllInSync waits until every partition of name has a leader and all
// its replicas in the ISR.
func waitAllInSync(t *testing.T, procs []*brokerProc, name string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "every replica of "+name+" in the ISR", func() bool {
		d, err := anyClient(procs).DescribeTopic(context.Background(), name)
		if err != nil {
			return false
		}
		for _, p := range d.Partitions {
			if p.Leader < 0 || len(p.ISR) != len(p.Replicas) {
				return false
			}
		}
		return true
	})
}

// checkOnDisk opens partition directory dir in every broker's data
// directory (the brokers are stopped), checks that the replicas hold the
// same bytes from the largest log start offset up to hw, and counts the
// acknowledged records of partition part that are not exactly once at
// their offset. With retained, records below the log start count as
// deleted by retention, not lost; the log start must not pass hw.
func checkOnDisk(t *testing.T, procs []*brokerProc, dir string, hw int64, ack map[string]acked, part int32, retained bool) (lost, duplicated int) {
	t.Helper()
	logs := make([]*storage.Log, len(procs))
	start := int64(0)
	for i, p := range procs {
		l, err := storage.Open(filepath.Join(p.dataDir, dir), storage.DefaultConfig())
		if err != nil {
			t.Fatalf("broker %d: open %s: %v", p.id, dir, err)
		}
		defer l.Close()
		if l.LogEndOffset() < hw {
			t.Errorf("broker %d: %s ends at %d, below the high watermark %d", p.id, dir, l.LogEndOffset(), hw)
		}
		if l.LogStartOffset() > hw {
			t.Errorf("broker %d: %s starts at %d, past the high watermark %d", p.id, dir, l.LogStartOffset(), hw)
		}
		logs[i] = l
		start = max(start, l.LogStartOffset())
	}
	var first []byte
	for i, l := range logs {
		raw := readRaw(t, l, hw)
		// Replicas may have deleted different amounts by retention: compare
		// from the batch holding the largest log start on.
		raw = fromOffset(t, raw, start)
		if i == 0 {
			first = raw
		} else if !slices.Equal(raw, first) {
			t.Errorf("%s: broker %d's log from %d up to the high watermark %d differs from broker %d's (%d vs %d bytes)",
				dir, procs[i].id, start, hw, procs[0].id, len(raw), len(first))
		}
	}
	byOffset := map[int64]string{}
	count := map[string]int{}
	for _, r := range readRecords(t, logs[0], hw) {
		byOffset[r.Offset] = string(r.Value)
		count[string(r.Value)]++
	}
	ls := logs[0].LogStartOffset()
	for value, a := range ack {
		switch {
		case a.partition != part:
		case retained && a.offset < ls:
			// Deleted by retention, as it should be.
		case byOffset[a.offset] != value:
			lost++
			if lost <= 5 {
				t.Errorf("%s: acknowledged %s at offset %d; the log has %q there", dir, value, a.offset, byOffset[a.offset])
			}
		case count[value] > 1:
			duplicated++
			if duplicated <= 5 {
				t.Errorf("%s: acknowledged %s appears %d times", dir, value, count[value])
			}
		}
	}
	t.Logf("%s: replicas identical from offset %d up to the high watermark %d (%d bytes), log start %d on broker %d",
		dir, start, hw, len(first), ls, procs[0].id)
	return lost, duplicated
}

// fromOffset drops the batches of raw that end below offset.
func fromOffset(t *testing.T, raw []byte, offset int64) []byte {
	t.Helper()
	for len(raw) > 0 {
		h, err := storage.ParseBatchHeader(raw)
		if err != nil {
			t.Fatalf("batch: %v", err)
		}
		if h.NextOffset() > offset {
			break
		}
		raw = raw[h.Size():]
	}
	return raw
}

// readRecords returns the records of l below hw.
func readRecords(t *testing.T, l *storage.Log, hw int64) []storage.Record {
	t.Helper()
	var out []storage.Record
	for off := l.LogStartOffset(); off < hw; {
		recs, err := l.Read(off, hw, 1<<20, 0)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		if len(recs) == 0 {
			break
		}
		out = append(out, recs...)
		off = recs[len(recs)-1].Offset + 1
	}
	return out
}
