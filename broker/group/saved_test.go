package group

import (
	"reflect"
	"testing"
	"time"
)

// The original broker's manual demo flow, steps 4–7 and 11.
func TestSeedDemoFlow(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	start := noon
	must(t, e.c.Join(bg, g, "member-a"))
	must(t, e.c.Join(bg, g, "member-b"))
	members, _ := members(e.c, g)
	if !reflect.DeepEqual(ids(members), []string{"member-a", "member-b"}) {
		t.Fatalf("members = %v", members)
	}

	want := []Assignment{asg("member-a", "orders", 0, 1), asg("member-b", "orders", 2, 3)}
	got, err := e.c.Rebalance(bg, g, "orders")
	must(t, err)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rebalance = %+v, want %+v", got, want)
	}
	saved, found, err := e.c.SavedAssignment(g, "orders")
	must(t, err)
	if !found || !reflect.DeepEqual(saved, want) {
		t.Fatalf("saved = %v %+v", found, saved)
	}

	// Wait 35 s, heartbeat only member-b, cleanup-and-rebalance with 30 s.
	e.clock.Set(start.Add(35 * time.Second))
	must(t, e.c.Heartbeat(bg, g, "member-b"))
	removed, got, err := e.c.CleanupAndRebalance(bg, g, "orders", 30*time.Second)
	must(t, err)
	if !reflect.DeepEqual(ids(removed), []string{"member-a"}) {
		t.Fatalf("removed = %v", ids(removed))
	}
	want = []Assignment{asg("member-b", "orders", 0, 1, 2, 3)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("assignments = %+v, want %+v", got, want)
	}
	saved, found, _ = e.c.SavedAssignment(g, "orders")
	if !found || !reflect.DeepEqual(saved, want) {
		t.Fatalf("saved after cleanup = %+v", saved)
	}

	// Step 10: commit and read an offset. Step 11: both survive a restart.
	must(t, e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: NoGeneration, Offsets: []OffsetCommit{{Topic: "orders", Partition: 0, Offset: 2}}}))
	c := e.restart()
	saved, found, _ = c.SavedAssignment(g, "orders")
	if !found || !reflect.DeepEqual(saved, want) {
		t.Fatalf("saved after restart = %+v", saved)
	}
	off, found, err := c.Offset(g, "orders", 0)
	must(t, err)
	if !found || off.Offset != 2 {
		t.Fatalf("offset after restart = %+v %v", off, found)
	}
}

// The original broker's cleanup-and-rebalance example: timeout 5 minutes,
// request at 12:00.
func TestCleanupAndRebalance(t *testing.T) {
	const g = "analytics-workers"
	setup := func(t *testing.T) *env {
		e := newEnv(t)
		for _, m := range []struct {
			id   string
			seen time.Time
		}{{"member-a", at(11, 54)}, {"member-b", at(11, 59)}, {"member-c", at(11, 59)}} {
			e.clock.Set(m.seen)
			must(t, e.c.Join(bg, g, m.id))
		}
		e.clock.Set(noon)
		return e
	}

	t.Run("removes stale, assigns the rest", func(t *testing.T) {
		e := setup(t)
		removed, got, err := e.c.CleanupAndRebalance(bg, g, "orders", 5*time.Minute)
		must(t, err)
		if !reflect.DeepEqual(removed, []Member{{"member-a", at(11, 54)}}) {
			t.Fatalf("removed = %+v", removed)
		}
		want := []Assignment{asg("member-b", "orders", 0, 1), asg("member-c", "orders", 2, 3)}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("assignments = %+v", got)
		}
		// Membership and assignment are both journaled.
		c := e.restart()
		if m, _ := members(c, g); !reflect.DeepEqual(ids(m), []string{"member-b", "member-c"}) {
			t.Fatalf("members after restart = %v", m)
		}
		if saved, _, _ := c.SavedAssignment(g, "orders"); !reflect.DeepEqual(saved, want) {
			t.Fatalf("saved after restart = %+v", saved)
		}
	})

	t.Run("every member stale", func(t *testing.T) {
		e := setup(t)
		_, err := e.c.Rebalance(bg, g, "orders")
		must(t, err)
		removed, _, err := e.c.CleanupAndRebalance(bg, g, "orders", time.Second)
		wantErr(t, err, ErrNoActiveMembers)
		if !reflect.DeepEqual(ids(removed), []string{"member-a", "member-b", "member-c"}) {
			t.Fatalf("removed = %v", ids(removed))
		}
		if m, _ := members(e.c, g); len(m) != 0 {
			t.Fatalf("members = %v, want none", m)
		}
	})

	t.Run("bad input stores nothing", func(t *testing.T) {
		e := setup(t)
		before := len(e.journal.Records())
		_, _, err := e.c.CleanupAndRebalance(bg, g, "nope", time.Second)
		wantErr(t, err, ErrUnknownTopic)
		_, _, err = e.c.CleanupAndRebalance(bg, g, "orders", 0)
		wantErr(t, err, ErrInvalidArgument)
		_, _, err = e.c.CleanupAndRebalance(bg, " ", "orders", time.Second)
		wantErr(t, err, ErrInvalidArgument)
		if len(e.journal.Records()) != before {
			t.Fatal("a rejected request stored something")
		}
	})

	t.Run("unknown group", func(t *testing.T) {
		e := setup(t)
		_, _, err := e.c.CleanupAndRebalance(bg, "nobody", "orders", time.Second)
		wantErr(t, err, ErrNoActiveMembers)
	})
}

func TestRebalance(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	_, err := e.c.Rebalance(bg, g, "orders")
	wantErr(t, err, ErrNoActiveMembers)
	must(t, e.c.Join(bg, g, "member-b"))
	must(t, e.c.Join(bg, g, "member-a"))
	_, err = e.c.Rebalance(bg, g, "nope")
	wantErr(t, err, ErrUnknownTopic)

	// The group's strategy applies.
	e.topics.add("payments", 3)
	_, err = e.c.SetConfig(bg, g, GroupConfig{AssignmentStrategy: StrategyRoundRobin})
	must(t, err)
	got, err := e.c.Rebalance(bg, g, "payments")
	must(t, err)
	want := []Assignment{asg("member-a", "payments", 0, 2), asg("member-b", "payments", 1)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("roundrobin rebalance = %+v", got)
	}
}

func TestAssignIsNotSaved(t *testing.T) {
	e := newEnv(t)
	got, err := e.c.Assign("orders", []string{"member-b", " member-a", "member-a"})
	must(t, err)
	want := []Assignment{asg("member-a", "orders", 0, 1), asg("member-b", "orders", 2, 3)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("assign = %+v", got)
	}
	if len(e.journal.Records()) != 0 {
		t.Fatal("assign stored something")
	}
	_, err = e.c.Assign("orders", nil)
	wantErr(t, err, ErrInvalidArgument)
	_, err = e.c.Assign("orders", []string{""})
	wantErr(t, err, ErrInvalidArgument)
	_, err = e.c.Assign("nope", []string{"a"})
	wantErr(t, err, ErrUnknownTopic)
}

func TestSavedAssignmentStore(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	e.topics.add("payments", 2)
	e.topics.add("audit", 1)
	must(t, e.c.Join(bg, g, "member-a"))
	must(t, e.c.Join(bg, "other", "member-z"))

	if got, _ := e.c.AssignmentTopics(g); got == nil || len(got) != 0 {
		t.Fatalf("topics of a group without saved assignments = %#v", got)
	}
	_, err := e.c.AssignmentTopics("  ")
	wantErr(t, err, ErrInvalidArgument)
	got, found, err := e.c.SavedAssignment(g, "orders")
	must(t, err)
	if found || got == nil || len(got) != 0 {
		t.Fatalf("missing assignment = %v %#v, want not found and []", found, got)
	}

	for _, topic := range []string{"payments", "orders", "audit"} {
		_, err := e.c.Rebalance(bg, g, topic)
		must(t, err)
	}
	_, err = e.c.Rebalance(bg, "other", "orders")
	must(t, err)
	check := func(c *Coordinator, want ...string) {
		t.Helper()
		got, err := c.AssignmentTopics(g)
		must(t, err)
		if want == nil {
			want = []string{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("topics = %v, want %v", got, want)
		}
	}
	check(e.c, "audit", "orders", "payments")

	// Delete is per group/topic, idempotent, and leaves membership and offsets.
	must(t, e.c.DeleteAssignment(bg, g, "orders"))
	must(t, e.c.DeleteAssignment(bg, g, "orders"))
	must(t, e.c.DeleteAssignment(bg, "no-such-group", "orders"))
	check(e.c, "audit", "payments")
	check(e.restart(), "audit", "payments")
	if m, _ := members(e.c, g); len(m) != 1 {
		t.Fatal("delete removed members")
	}

	// DeleteAssignments clears one group only.
	must(t, e.c.DeleteAssignments(bg, g))
	check(e.c)
	check(e.restart())
	if got, _ := e.c.AssignmentTopics("other"); !reflect.DeepEqual(got, []string{"orders"}) {
		t.Fatalf("other group's topics = %v", got)
	}
}
