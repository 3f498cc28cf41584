package group

import (
	"reflect"
	"testing"
	"time"
)

func TestJoinValidatesAndTrims(t *testing.T) {
	tests := []struct {
		name, group, member string
		wantErr             error
	}{
		{"trimmed", "  analytics-workers ", "\tmember-a\n", nil},
		{"empty group", "", "member-a", ErrInvalidArgument},
		{"blank group", "   ", "member-a", ErrInvalidArgument},
		{"empty member", "analytics-workers", "", ErrInvalidArgument},
		{"blank member", "analytics-workers", " \t", ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			for _, op := range []func() error{
				func() error { return e.c.Join(bg, tt.group, tt.member) },
				func() error { return e.c.Heartbeat(bg, tt.group, tt.member) },
				func() error { return e.c.LeaveGroup(bg, tt.group, tt.member) },
			} {
				if err := op(); tt.wantErr != nil {
					wantErr(t, err, tt.wantErr)
				} else {
					must(t, err)
				}
			}
			if tt.wantErr != nil && len(e.journal.Records()) != 0 {
				t.Fatal("a rejected request stored something")
			}
		})
	}
	e := newEnv(t)
	must(t, e.c.Join(bg, "  analytics-workers ", " member-a "))
	got, err := members(e.c, "analytics-workers")
	must(t, err)
	if want := []Member{{ID: "member-a", LastSeen: noon}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("members = %+v, want %+v", got, want)
	}
}

func TestJoinLeaveHeartbeat(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"

	// Join sets LastSeen for a new member; a duplicate join changes nothing.
	must(t, e.c.Join(bg, g, "member-b"))
	e.clock.Set(at(12, 1))
	must(t, e.c.Join(bg, g, "member-a"))
	e.clock.Set(at(12, 2))
	must(t, e.c.Join(bg, g, "member-a"))
	if n := len(e.journal.Records()); n != 2 {
		t.Fatalf("%d records after a duplicate join, want 2", n)
	}
	got, _ := members(e.c, g)
	want := []Member{{"member-a", at(12, 1)}, {"member-b", noon}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("members = %+v, want %+v", got, want)
	}

	// Heartbeat updates LastSeen and creates a missing member.
	e.clock.Set(at(12, 3))
	must(t, e.c.Heartbeat(bg, g, "member-b"))
	must(t, e.c.Heartbeat(bg, g, "member-c"))
	got, _ = members(e.c, g)
	want = []Member{{"member-a", at(12, 1)}, {"member-b", at(12, 3)}, {"member-c", at(12, 3)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("members = %+v, want %+v", got, want)
	}

	// Leave removes; a missing member (or group) is unknown and changes
	// nothing (the original API answers that as done: the HTTP front door).
	must(t, e.c.LeaveGroup(bg, g, "member-b"))
	records := len(e.journal.Records())
	wantErr(t, e.c.LeaveGroup(bg, g, "member-b"), ErrUnknownMember)
	wantErr(t, e.c.LeaveGroup(bg, "no-such-group", "member-b"), ErrUnknownMember)
	if n := len(e.journal.Records()); n != records {
		t.Fatalf("leaving a missing member stored %d records", n-records)
	}
	left, err := members(e.c, g)
	must(t, err)
	if !reflect.DeepEqual(ids(left), []string{"member-a", "member-c"}) {
		t.Fatalf("members = %+v", left)
	}
	if got, _ := members(e.c, "no-such-group"); got == nil || len(got) != 0 {
		t.Fatalf("members of an unknown group = %#v, want empty", got)
	}
}

func TestGroupsSortedWithoutEmptyGroups(t *testing.T) {
	e := newEnv(t)
	if got := groupsWithMembers(e.c); got == nil || len(got) != 0 {
		t.Fatalf("groups = %#v, want empty", got)
	}
	must(t, e.c.Join(bg, "zeta", "m"))
	must(t, e.c.Join(bg, "alpha", "m"))
	must(t, e.c.Join(bg, "mid", "m"))
	must(t, e.c.Join(bg, "stale-only", "m"))
	// A group with only offsets is not a membership group.
	must(t, e.c.CommitOffsets(bg, CommitRequest{Group: "offsets-only", Generation: NoGeneration,
		Offsets: []OffsetCommit{{Topic: "orders", Offset: 1}}}))
	if got, want := groupsWithMembers(e.c), []string{"alpha", "mid", "stale-only", "zeta"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("groups = %v, want %v", got, want)
	}
	must(t, e.c.LeaveGroup(bg, "mid", "m"))
	e.clock.Advance(10 * time.Minute)
	must(t, e.c.Heartbeat(bg, "alpha", "m"))
	must(t, e.c.Heartbeat(bg, "zeta", "m"))
	removed, err := e.c.RemoveStaleMembers(bg, "stale-only", 5*time.Minute)
	must(t, err)
	if !reflect.DeepEqual(ids(removed), []string{"m"}) {
		t.Fatalf("removed %v", removed)
	}
	if got, want := groupsWithMembers(e.c), []string{"alpha", "zeta"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("groups = %v, want %v", got, want)
	}
	// Restart: the listing is rebuilt from the journal.
	if got, want := groupsWithMembers(e.restart()), []string{"alpha", "zeta"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("groups after restart = %v, want %v", got, want)
	}
}

// The original broker's example: now 12:00, timeout 5 minutes.
func TestStaleMembers(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	for _, m := range []struct {
		id   string
		seen time.Time
	}{{"member-b", at(11, 57)}, {"member-c", at(11, 50)}, {"member-a", at(11, 54)}} {
		e.clock.Set(m.seen)
		must(t, e.c.Heartbeat(bg, g, m.id))
	}
	e.clock.Set(noon)

	stale, err := e.c.StaleMembers(g, 5*time.Minute)
	must(t, err)
	want := []Member{{"member-a", at(11, 54)}, {"member-c", at(11, 50)}}
	if !reflect.DeepEqual(stale, want) {
		t.Fatalf("stale = %+v, want %+v", stale, want)
	}
	if all, _ := members(e.c, g); len(all) != 3 {
		t.Fatalf("StaleMembers changed the group: %v", all)
	}

	// Exactly the timeout is not stale: now − LastSeen > timeout.
	stale, _ = e.c.StaleMembers(g, 6*time.Minute)
	if !reflect.DeepEqual(ids(stale), []string{"member-c"}) {
		t.Fatalf("stale at 6m = %v, want [member-c]", ids(stale))
	}
	if got, _ := e.c.StaleMembers("no-such-group", time.Minute); got == nil || len(got) != 0 {
		t.Fatalf("stale of unknown group = %#v", got)
	}
	_, err = e.c.StaleMembers(g, 0)
	wantErr(t, err, ErrInvalidArgument)

	removed, err := e.c.RemoveStaleMembers(bg, g, 5*time.Minute)
	must(t, err)
	if !reflect.DeepEqual(ids(removed), []string{"member-a", "member-c"}) {
		t.Fatalf("removed = %v", ids(removed))
	}
	left, _ := members(e.c, g)
	if !reflect.DeepEqual(left, []Member{{"member-b", at(11, 57)}}) {
		t.Fatalf("remaining = %+v", left)
	}
	// Removal persists.
	if got, _ := members(e.restart(), g); !reflect.DeepEqual(got, left) {
		t.Fatalf("after restart = %+v, want %+v", got, left)
	}
}

func TestRemoveStaleDoesNotTouchSavedAssignments(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	must(t, e.c.Join(bg, g, "member-a"))
	must(t, e.c.Join(bg, g, "member-b"))
	_, err := e.c.Rebalance(bg, g, "orders")
	must(t, err)
	e.clock.Advance(time.Hour)
	must(t, e.c.Heartbeat(bg, g, "member-b"))
	_, err = e.c.RemoveStaleMembers(bg, g, time.Minute)
	must(t, err)
	saved, found, _ := e.c.SavedAssignment(g, "orders")
	want := []Assignment{asg("member-a", "orders", 0, 1), asg("member-b", "orders", 2, 3)}
	if !found || !reflect.DeepEqual(saved, want) {
		t.Fatalf("saved = %+v", saved)
	}
}

// Write-ahead: when the journal refuses a change, nothing changes.
func TestJournalFailureChangesNothing(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	must(t, e.c.Join(bg, g, "member-a"))
	must(t, e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: NoGeneration, Offsets: []OffsetCommit{{Topic: "orders", Offset: 2}}}))
	before := view(e.c)

	e.journal.fail.Store(true)
	e.clock.Advance(time.Hour)
	ops := map[string]func() error{
		"join":      func() error { return e.c.Join(bg, g, "member-b") },
		"heartbeat": func() error { return e.c.Heartbeat(bg, g, "member-a") },
		"leave":     func() error { return e.c.LeaveGroup(bg, g, "member-a") },
		"remove stale": func() error {
			_, err := e.c.RemoveStaleMembers(bg, g, time.Minute)
			return err
		},
		"rebalance": func() error { _, err := e.c.Rebalance(bg, g, "orders"); return err },
		"commit": func() error {
			return e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: NoGeneration, Offsets: []OffsetCommit{{Topic: "orders", Offset: 9}}})
		},
		"config": func() error {
			_, err := e.c.SetConfig(bg, g, GroupConfig{AssignmentStrategy: StrategyRoundRobin})
			return err
		},
		"new group": func() error { return e.c.Join(bg, "other", "member-a") },
		"join group": func() error {
			_, err := e.c.JoinGroup(bg, JoinRequest{Group: g, Topics: []string{"orders"}})
			return err
		},
	}
	for name, op := range ops {
		if err := op(); !errorsIs(err, errJournalDown) {
			t.Errorf("%s: error = %v, want the journal's", name, err)
		}
	}
	if after := view(e.c); !reflect.DeepEqual(before, after) {
		t.Fatalf("state changed:\nbefore %+v\nafter  %+v", before, after)
	}
	if got := groupsWithMembers(e.c); !reflect.DeepEqual(got, []string{g}) {
		t.Fatalf("groups = %v", got)
	}
}
