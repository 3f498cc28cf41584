package storage

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestEpochCacheEndOffsetFor(t *testing.T) {
	c := newEpochCache()
	if e, o := c.endOffsetFor(0, 100); e != -1 || o != -1 {
		t.Fatalf("empty cache = (%d, %d)", e, o)
	}
	for _, e := range []epochEntry{{2, 10}, {4, 30}, {5, 45}} {
		if !c.assign(e.Epoch, e.StartOffset) {
			t.Fatalf("assign %+v refused", e)
		}
	}
	if c.assign(5, 60) || c.assign(3, 70) || c.assign(-1, 80) {
		t.Fatal("assign accepted an epoch that is not newer")
	}
	const leo = 90
	for _, tc := range []struct {
		epoch     int32
		wantEpoch int32
		wantEnd   int64
	}{
		{5, 5, leo},  // latest: ends at the log end
		{4, 4, 45},   // ends where 5 starts
		{3, 2, 30},   // unknown epoch between: largest ≤ 3 is 2, ends where 4 starts
		{2, 2, 30},   //
		{1, 1, 10},   // below every known epoch: itself and the first start
		{6, -1, -1},  // above the latest
		{-1, -1, -1}, // undefined
	} {
		if e, o := c.endOffsetFor(tc.epoch, leo); e != tc.wantEpoch || o != tc.wantEnd {
			t.Errorf("endOffsetFor(%d) = (%d, %d), want (%d, %d)", tc.epoch, e, o, tc.wantEpoch, tc.wantEnd)
		}
	}
	if c.latest() != 5 {
		t.Fatalf("latest = %d", c.latest())
	}
}

func TestEpochCacheTruncation(t *testing.T) {
	c := newEpochCache()
	for _, e := range []epochEntry{{1, 0}, {2, 10}, {4, 30}, {5, 45}} {
		c.assign(e.Epoch, e.StartOffset)
	}
	if !c.truncateFromEnd(31) || !reflect.DeepEqual(c.entries, []epochEntry{{1, 0}, {2, 10}, {4, 30}}) {
		t.Fatalf("truncateFromEnd(31) = %v", c.entries)
	}
	if c.truncateFromEnd(31) {
		t.Fatal("second truncateFromEnd changed the cache")
	}
	if !c.truncateFromStart(12) || !reflect.DeepEqual(c.entries, []epochEntry{{2, 12}, {4, 30}}) {
		t.Fatalf("truncateFromStart(12) = %v", c.entries)
	}
	if !c.truncateFromStart(30) || !reflect.DeepEqual(c.entries, []epochEntry{{4, 30}}) {
		t.Fatalf("truncateFromStart(30) = %v", c.entries)
	}
	if c.truncateFromStart(5) {
		t.Fatal("truncateFromStart below the first epoch changed the cache")
	}
	if !c.truncateFromEnd(30) || c.latest() != -1 {
		t.Fatalf("truncateFromEnd(30) left %v", c.entries)
	}
	c.assign(7, 50)
	if !c.clear() || c.latest() != -1 {
		t.Fatal("clear")
	}
}

func TestEpochCachePersistence(t *testing.T) {
	dir := t.TempDir()
	c := newEpochCache()
	c.assign(0, 0)
	c.assign(3, 17)
	if err := c.persist(dir); err != nil {
		t.Fatal(err)
	}
	got, ok := loadEpochCache(dir)
	if !ok || !reflect.DeepEqual(got.entries, c.entries) {
		t.Fatalf("loaded %v %v", got.entries, ok)
	}
	for name, content := range map[string]string{
		"decreasing epochs":  "0\n2\n3 0\n2 5\n",
		"decreasing offsets": "0\n2\n1 9\n2 5\n",
		"negative epoch":     "0\n1\n-1 0\n",
		"garbage":            "zzz",
	} {
		if err := os.WriteFile(filepath.Join(dir, leaderEpochFile), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if c, ok := loadEpochCache(dir); ok || len(c.entries) != 0 {
			t.Errorf("%s: loaded %v", name, c.entries)
		}
	}
}

// A new leader assigns its epoch before writing: a follower's question
// about the previous epoch is then answered with the new epoch's start, not
// the moving log end, and appends in the new epoch keep that start.
func TestAssignEpochAtElection(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, smallConfig())
	appendRange(t, l, 0, 10, 5, 1)
	if err := l.AssignEpoch(3); err != nil {
		t.Fatal(err)
	}
	if l.LatestEpoch() != 3 {
		t.Fatalf("latest epoch %d after assigning 3", l.LatestEpoch())
	}
	for _, epoch := range []int32{1, 2} {
		if e, end := l.EndOffsetForEpoch(epoch); e != 1 || end != 10 {
			t.Fatalf("EndOffsetForEpoch(%d) = (%d, %d), want (1, 10)", epoch, e, end)
		}
	}
	if err := l.AssignEpoch(2); err != nil || l.LatestEpoch() != 3 {
		t.Fatalf("assigning an older epoch: %v, latest %d", err, l.LatestEpoch())
	}
	if _, _, err := l.Append([]Record{rec(10)}, 2); err == nil {
		t.Fatal("append in an epoch older than the assigned one was accepted")
	}
	appendRange(t, l, 10, 15, 5, 3)
	if e, end := l.EndOffsetForEpoch(1); e != 1 || end != 10 {
		t.Fatalf("after appends in epoch 3: EndOffsetForEpoch(1) = (%d, %d), want (1, 10)", e, end)
	}
	if e, end := l.EndOffsetForEpoch(3); e != 3 || end != 15 {
		t.Fatalf("EndOffsetForEpoch(3) = (%d, %d), want (3, 15)", e, end)
	}

	// An epoch that never wrote does not survive a reopen.
	if err := l.AssignEpoch(4); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, dir, smallConfig())
	defer l.Close()
	if l.LatestEpoch() != 3 {
		t.Fatalf("latest epoch %d after reopening, want 3 (epoch 4 wrote nothing)", l.LatestEpoch())
	}
	l.Close()
	if err := l.AssignEpoch(5); err == nil {
		t.Fatal("AssignEpoch on a closed log succeeded")
	}
}

// A leader that assigned its epoch at election and wrote nothing, then
// became a follower: truncating to its log end (or past it) drops that
// epoch, as Kafka's truncateTo does, so the new leader's batches of the
// older epoch are accepted; kept, it refused them for good.
func TestTruncateAtTheLogEndDropsAnEpochThatWroteNothing(t *testing.T) {
	for _, offset := range []int64{10, 12} {
		dir := t.TempDir()
		l := mustOpen(t, dir, smallConfig())
		appendRange(t, l, 0, 10, 5, 4)
		if err := l.AssignEpoch(5); err != nil {
			t.Fatal(err)
		}
		if err := l.Truncate(offset); err != nil {
			t.Fatal(err)
		}
		if l.LatestEpoch() != 4 || l.LogEndOffset() != 10 {
			t.Errorf("Truncate(%d) at log end 10: latest epoch %d, log end %d; want 4, 10", offset, l.LatestEpoch(), l.LogEndOffset())
		}
		// The new leader's log continues epoch 4 past offset 10.
		leader := mustOpen(t, t.TempDir(), smallConfig())
		appendRange(t, leader, 0, 15, 5, 4)
		raw, err := leader.ReadRaw(10, -1, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		leader.Close()
		if _, err := l.AppendRaw(raw); err != nil {
			t.Errorf("appending the leader's epoch 4 batches after Truncate(%d): %v", offset, err)
		}
		// The trimmed cache is what is on disk.
		l.Close()
		l = mustOpen(t, dir, smallConfig())
		if e, end := l.EndOffsetForEpoch(4); e != 4 || end != 15 || l.LatestEpoch() != 4 {
			t.Errorf("after reopening: latest %d, EndOffsetForEpoch(4) = (%d, %d); want 4, (4, 15)", l.LatestEpoch(), e, end)
		}
		l.Close()
	}
}
