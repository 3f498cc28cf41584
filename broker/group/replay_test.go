package group

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"
)

// scenario puts a coordinator through every kind of change.
func scenario(t testing.TB, e *env) (protocolMember string) {
	t.Helper()
	const g = "analytics-workers"
	e.topics.add("payments", 3)
	must(t, e.c.Join(bg, g, "member-a"))
	must(t, e.c.Join(bg, g, "member-b"))
	_, err := e.c.Rebalance(bg, g, "orders")
	must(t, err)
	_, err = e.c.Rebalance(bg, g, "payments")
	must(t, err)
	must(t, e.c.DeleteAssignment(bg, g, "payments"))
	e.clock.Advance(35 * time.Second)
	must(t, e.c.Heartbeat(bg, g, "member-b"))
	_, _, err = e.c.CleanupAndRebalance(bg, g, "orders", 30*time.Second)
	must(t, err)
	must(t, e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: NoGeneration, Offsets: []OffsetCommit{{Topic: "orders", Partition: 0, Offset: 2},
		{Topic: "payments", Partition: 1, Offset: 4}}}))
	if errs, err := e.c.DeleteOffsets(bg, g, []TopicPartition{{"payments", 1}}); err != nil || errs[0] != nil {
		t.Fatalf("deleting the offset of payments-1: %v %v", err, errs)
	}

	_, err = e.c.SetConfig(bg, "proto", GroupConfig{SessionTimeout: time.Minute, AssignmentStrategy: StrategyRoundRobin})
	must(t, err)
	req := JoinRequest{Group: "proto", ClientID: "app", Topics: []string{"orders", "payments"}, SessionTimeout: 20 * time.Second, RebalanceTimeout: 5 * time.Second}
	first, err := e.c.JoinGroup(bg, req)
	must(t, err)
	r1, r2, r3 := req, req, req
	r1.MemberID = first.MemberID
	res := grow(t, e.c, []JoinRequest{r1}, []JoinRequest{r2, r3})
	for _, r := range res {
		_, err := e.c.SyncGroup(bg, "proto", r.MemberID, r.Generation)
		must(t, err)
	}
	must(t, e.c.CommitOffsets(bg, CommitRequest{Group: "proto", MemberID: res[0].MemberID, Generation: res[0].Generation,
		Offsets: []OffsetCommit{{Topic: "payments", Partition: 2, Offset: 9, Metadata: "meta"}}}))
	e.clock.Advance(25 * time.Second) // over a third of the group's session timeout: journaled
	must(t, e.c.HeartbeatGroup(bg, "proto", res[1].MemberID, res[1].Generation))
	must(t, e.c.Join(bg, "proto", "simple"))

	must(t, e.c.Join(bg, "to-delete", "x"))
	must(t, e.c.CommitOffsets(bg, CommitRequest{Group: "to-delete", Generation: NoGeneration, Offsets: []OffsetCommit{{Topic: "orders", Offset: 1}}}))
	must(t, e.c.LeaveGroup(bg, "to-delete", "x"))
	must(t, e.c.DeleteGroup(bg, "to-delete"))
	return res[0].MemberID
}

func TestRestartReplaysJournal(t *testing.T) {
	e := newEnv(t)
	member := scenario(t, e)
	want := view(e.c)
	if len(want) != 2 {
		t.Fatalf("scenario left groups %v", want)
	}
	c := e.restart()
	if got := view(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("after restart:\n%+v\nwant\n%+v", got, want)
	}
	// The restarted coordinator carries the generation on.
	d, err := c.Describe(bg, "proto", nil)
	must(t, err)
	if d.State != Stable || d.Generation != 2 || len(d.Members) != 4 {
		t.Fatalf("describe after restart = %+v", d)
	}
	must(t, c.HeartbeatGroup(bg, "proto", member, 2))
	must(t, c.CommitOffsets(bg, CommitRequest{Group: "proto", MemberID: member, Generation: 2, Offsets: []OffsetCommit{{Topic: "orders", Offset: 1}}}))
	wantErr(t, c.CommitOffsets(bg, CommitRequest{Group: "proto", MemberID: member, Generation: 1, Offsets: []OffsetCommit{{Topic: "orders", Offset: 1}}}), ErrIllegalGeneration)
}

func TestSnapshotReplaysToTheSameState(t *testing.T) {
	e := newEnv(t)
	member := scenario(t, e)
	// Not journaled (less than a third of the session since the last one),
	// but part of the current state, so part of the snapshot.
	e.clock.Advance(time.Second)
	must(t, e.c.HeartbeatGroup(bg, "proto", member, 2))
	want := view(e.c)

	c := e.newCoordinator()
	defer c.Close()
	snap := e.c.Snapshot()
	for _, r := range snap {
		must(t, c.Replay(r))
	}
	if got := view(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("from snapshot:\n%+v\nwant\n%+v", got, want)
	}
	if again := c.Snapshot(); !reflect.DeepEqual(again, snap) {
		t.Fatal("snapshot of a snapshot differs")
	}

	// A snapshot taken while a journaled change awaits a rebalance carries
	// the rebalance.
	must(t, e.c.LeaveGroup(bg, "proto", member))
	c2 := e.newCoordinator()
	defer c2.Close()
	for _, r := range e.c.Snapshot() {
		must(t, c2.Replay(r))
	}
	if got, want := view(c2), view(e.c); !reflect.DeepEqual(got, want) || !got["proto"].Pending || got["proto"].State != PreparingRebalance {
		t.Fatalf("pending rebalance not carried:\n%+v\nwant\n%+v", got, want)
	}
}

// A journal that ends mid-rebalance (a protocol member left, the next
// generation was never written) resumes the rebalance after a restart.
func TestReplayResumesPendingRebalance(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	req := ordersJoin("")
	req.RebalanceTimeout = time.Minute
	first, err := e.c.JoinGroup(bg, req)
	must(t, err)
	r1 := req
	r1.MemberID = first.MemberID
	res := grow(t, e.c, []JoinRequest{r1}, []JoinRequest{req})
	a, b := res[0], res[1]
	must(t, e.c.LeaveGroup(bg, g, b.MemberID))
	// a has not rejoined: the journal ends with the leave.
	records := e.journal.Records()
	if last, _ := decodeRecord(records[len(records)-1]); last.Type != recLeave {
		t.Fatalf("last record %s", records[len(records)-1])
	}

	replayAll := func() *Coordinator {
		c := e.newCoordinator()
		t.Cleanup(c.Close)
		for _, r := range records {
			must(t, c.Replay(r))
		}
		return c
	}

	c := replayAll()
	wantErr(t, c.HeartbeatGroup(bg, g, a.MemberID, a.Generation), ErrRebalanceInProgress)
	next, err := c.JoinGroup(bg, ordersJoin(a.MemberID))
	must(t, err)
	if next.Generation != a.Generation+1 || len(next.Members) != 1 {
		t.Fatalf("resumed rebalance = %+v", next)
	}

	// Nobody rejoins: the cleanup pass ends it at the deadline.
	c = replayAll()
	must(t, c.CleanupOnce(bg, e.clock.Now().Add(30*time.Second)))
	if d, _ := c.Describe(bg, g, nil); d.State != PreparingRebalance {
		t.Fatalf("rebalance ended before its deadline: %v", d.State)
	}
	must(t, c.CleanupOnce(bg, e.clock.Now().Add(time.Minute)))
	wantErr(t, c.HeartbeatGroup(bg, g, a.MemberID, a.Generation), ErrUnknownMember)
}

func TestReplayToleratesNewerAndRejectsGarbage(t *testing.T) {
	e := newEnv(t)
	must(t, e.c.Join(bg, "g", "m"))
	want := view(e.c)
	c := e.restart()
	for _, r := range []string{
		`{"v":2,"t":"sticky-assignment","g":"g","ts":5,"whatever":[1,2]}`,
		`{"v":2,"t":"seen","g":"g","ts":0,"id":"m","future_field":true}`,
	} {
		must(t, c.Replay([]byte(r)))
	}
	want["g"].Members[0].LastSeen = fromMs(0)
	if got := view(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v want %+v", got, want)
	}
	for _, r := range []string{``, `{`, `[]`, `{"t":"join","id":"m"}`, `{"g":"g"}`, `null`} {
		if err := c.Replay([]byte(r)); !errors.Is(err, ErrInvalidRecord) {
			t.Errorf("Replay(%q) = %v, want ErrInvalidRecord", r, err)
		}
	}
	if got := view(c); !reflect.DeepEqual(got, want) {
		t.Fatal("a rejected record changed state")
	}
}

// fileJournal appends length-prefixed records to a file, fsyncing each.
type fileJournal struct {
	mu sync.Mutex
	f  *os.File
}

func (j *fileJournal) Append(ctx context.Context, group string, record []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(record)))
	if _, err := j.f.Write(append(n[:], record...)); err != nil {
		return err
	}
	return j.f.Sync()
}

func readRecords(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	var out [][]byte
	r := bufio.NewReader(f)
	for {
		var n [4]byte
		if _, err := io.ReadFull(r, n[:]); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		rec := make([]byte, binary.BigEndian.Uint32(n[:]))
		if _, err := io.ReadFull(r, rec); err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
}

func TestStateSurvivesOnDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "__consumer_offsets-0.log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	must(t, err)
	e := newEnv(t)
	e.cfg.Journal = &fileJournal{f: f}
	e.c = e.newCoordinator()
	// The scenario's records go to the file; the memory journal stays empty.
	scenario(t, e)
	want := view(e.c)
	e.c.Close()
	must(t, f.Close())

	records := readRecords(t, path)
	if len(records) < 15 || !bytes.Contains(records[0], []byte(`"analytics-workers"`)) {
		t.Fatalf("%d records on disk, first %s", len(records), records[0])
	}
	c := e.newCoordinator()
	defer c.Close()
	for _, r := range records {
		must(t, c.Replay(r))
	}
	if got := view(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("from disk:\n%+v\nwant\n%+v", got, want)
	}
}

func FuzzReplay(f *testing.F) {
	e := newEnv(f)
	scenario(f, e)
	for _, r := range e.journal.Records() {
		f.Add(r)
	}
	for _, r := range e.c.Snapshot() {
		f.Add(r)
	}
	f.Add([]byte(`{"t":"gen","g":"g","gen":-5,"members":[{"id":""},{"id":"a","st":-1,"rt":99999999999999},{"id":"a"}],"rb":-1}`))
	f.Add([]byte(`{"t":"offsets","g":"g","o":[{"t":"","p":-1,"o":-7},{"t":"x","p":3,"o":-1}]}`))
	f.Add([]byte(`{"t":"config","g":"g","st":-100,"strategy":"sticky"}` + "\n" + `{"t":"leave","g":"g","ids":["a","a",""]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		topics := newFakeTopics()
		topics.add("orders", 4)
		clock := &fakeClock{t: noon}
		cfg := Config{Journal: &MemoryJournal{}, Partitions: topics, Now: clock.Now}
		c, err := New(cfg)
		must(t, err)
		defer c.Close()
		for _, line := range bytes.Split(data, []byte("\n")) {
			_ = c.Replay(line) // must not panic
		}
		// Whatever was loaded can be served, snapshotted and reloaded.
		snap := c.Snapshot()
		for _, id := range c.groupIDs() {
			_, _ = c.Describe(bg, id, []string{"orders"})
			_, _ = members(c, id)
		}
		c2, err := New(cfg)
		must(t, err)
		defer c2.Close()
		for _, r := range snap {
			if err := c2.Replay(r); err != nil {
				t.Fatalf("snapshot record %s: %v", r, err)
			}
		}
		if a, b := view(c), view(c2); !reflect.DeepEqual(a, b) {
			t.Fatalf("snapshot does not reproduce the state:\n%+v\n%+v", a, b)
		}
		must(t, c.CleanupOnce(bg, noon.Add(time.Hour)))
		ctx, cancel := context.WithTimeout(bg, 10*time.Millisecond)
		defer cancel()
		for _, id := range c.groupIDs() {
			_, _ = c.JoinGroup(ctx, JoinRequest{Group: id, Topics: []string{"orders"}})
		}
	})
}

// Compaction writes a snapshot before the records appended while it was
// taken; those records then replay onto a state that already holds them.
// Replaying any suffix of the journal again must leave the state as it is.
func TestReplayingASuffixAgainChangesNothing(t *testing.T) {
	e := newEnv(t)
	scenario(t, e)
	records := e.journal.Records()
	want := view(e.restart())
	for k := range records {
		c := e.restart()
		for _, r := range records[k:] {
			must(t, c.Replay(r))
		}
		if got := view(c); !reflect.DeepEqual(got, want) {
			t.Fatalf("replaying records %d.. again changed the state:\n%+v\nwant\n%+v", k, got, want)
		}
	}
}
