package group

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"
)

// batchJournal is a MemoryJournal that also appends a group's snapshot as
// one write.
type batchJournal struct {
	MemoryJournal
	batches int
}

func (j *batchJournal) AppendBatch(ctx context.Context, group string, records [][]byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.batches++
	j.records = append(j.records, records...)
	return nil
}

// replayFrom builds a coordinator from the journal records at and after
// from, as a broker does from a compacted partition.
func replayFrom(t *testing.T, e *env, records [][]byte) *Coordinator {
	t.Helper()
	c := e.newCoordinator()
	t.Cleanup(c.Close)
	for _, r := range records {
		must(t, c.Replay(r))
	}
	return c
}

func TestWriteSnapshotLetsTheJournalDropEarlierRecords(t *testing.T) {
	e := newEnv(t)
	member := scenario(t, e)
	// Part of the state but not journaled: the snapshot carries it.
	e.clock.Advance(time.Second)
	must(t, e.c.HeartbeatGroup(bg, "proto", member, 2))
	must(t, e.c.Heartbeat(bg, "analytics-workers", "member-b"))

	start := len(e.journal.Records())
	n, err := e.c.WriteSnapshot(bg)
	must(t, err)
	if n != 2 {
		t.Fatalf("WriteSnapshot wrote %d groups, want 2 (the deleted group has nothing left)", n)
	}
	// Later changes follow the snapshot in the journal.
	must(t, e.c.CommitOffsets(bg, CommitRequest{Group: "analytics-workers", Generation: NoGeneration,
		Offsets: []OffsetCommit{{Topic: "orders", Partition: 1, Offset: 7}}}))
	must(t, e.c.LeaveGroup(bg, "analytics-workers", "member-b"))

	c := replayFrom(t, e, e.journal.Records()[start:])
	if got, want := view(c), view(e.c); !reflect.DeepEqual(got, want) {
		t.Fatalf("replayed from the snapshot:\n%+v\nwant\n%+v", got, want)
	}
	d, err := c.Describe(bg, "proto", nil)
	must(t, err)
	if d.Generation != 2 || len(d.Members) != 4 {
		t.Fatalf("describe after compaction = %+v", d)
	}

	// A failed append stops the snapshot and says so.
	e.journal.fail.Store(true)
	if _, err := e.c.WriteSnapshot(bg); !errorsIs(err, errJournalDown) {
		t.Fatalf("WriteSnapshot with the journal down: %v", err)
	}
}

// Groups keep changing while the snapshot is written: records of a group
// appended before its own snapshot (but after WriteSnapshot began) replay
// before it, and the result is still the live state.
func TestWriteSnapshotWhileGroupsChange(t *testing.T) {
	e := newEnv(t)
	j := &batchJournal{}
	e.cfg.Journal = j
	e.c = e.newCoordinator()
	t.Cleanup(e.c.Close)
	const groups = 8
	commit := func(g string, p int32, off int64) {
		must(t, e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: NoGeneration,
			Offsets: []OffsetCommit{{Topic: "orders", Partition: p, Offset: off}}}))
	}
	for i := range groups {
		g := fmt.Sprint("group-", i)
		must(t, e.c.Join(bg, g, "resident"))
		commit(g, 0, 1)
	}
	for round := range 20 {
		start := len(j.Records())
		var wg sync.WaitGroup
		for i := range groups {
			g := fmt.Sprint("group-", i)
			wg.Go(func() {
				for k := range 10 {
					commit(g, int32(k%4), int64(100*round+k))
					if k%3 == 0 {
						must(t, e.c.Join(bg, g, fmt.Sprint("m-", k)))
					}
					if k%3 == 2 {
						must(t, e.c.LeaveGroup(bg, g, fmt.Sprint("m-", k-2)))
					}
				}
			})
		}
		wg.Go(func() {
			if _, err := e.c.WriteSnapshot(bg); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		c := replayFrom(t, e, j.Records()[start:])
		if got, want := view(c), view(e.c); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: replayed from the snapshot:\n%+v\nwant\n%+v", round, got, want)
		}
	}
	if j.batches == 0 {
		t.Fatal("the batch journal's AppendBatch was never used")
	}
}
