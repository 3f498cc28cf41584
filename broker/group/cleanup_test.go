package group

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// The original broker's background pass, with its default 5-minute timeout.
func TestCleanupOnce(t *testing.T) {
	const g = "analytics-workers"
	tests := []struct {
		name        string
		setup       func(e *env)
		wantMembers map[string][]string
		wantSaved   map[string][]Assignment // group/topic -> saved; nil = none
	}{
		{
			name: "stale member removed and saved assignments rebalanced",
			setup: func(e *env) {
				e.topics.add("payments", 2)
				e.clock.Set(at(11, 50))
				must(t, e.c.Join(bg, g, "member-a"))
				e.clock.Set(at(11, 58))
				must(t, e.c.Join(bg, g, "member-b"))
				must(t, e.c.Join(bg, g, "member-c"))
				_, err := e.c.Rebalance(bg, g, "orders")
				must(t, err)
				_, err = e.c.Rebalance(bg, g, "payments")
				must(t, err)
			},
			wantMembers: map[string][]string{g: {"member-b", "member-c"}},
			wantSaved: map[string][]Assignment{
				g + "/orders":   {asg("member-b", "orders", 0, 1), asg("member-c", "orders", 2, 3)},
				g + "/payments": {asg("member-b", "payments", 0), asg("member-c", "payments", 1)},
			},
		},
		{
			name: "every member stale: saved assignments deleted",
			setup: func(e *env) {
				e.topics.add("payments", 2)
				e.clock.Set(at(11, 0))
				must(t, e.c.Join(bg, g, "member-a"))
				must(t, e.c.Join(bg, g, "member-b"))
				_, err := e.c.Rebalance(bg, g, "orders")
				must(t, err)
				_, err = e.c.Rebalance(bg, g, "payments")
				must(t, err)
			},
			wantMembers: map[string][]string{},
			wantSaved:   map[string][]Assignment{},
		},
		{
			name: "saved topic that no longer exists is skipped, not deleted",
			setup: func(e *env) {
				e.topics.add("gone", 2)
				e.clock.Set(at(11, 0))
				must(t, e.c.Join(bg, g, "member-a"))
				e.clock.Set(at(11, 59))
				must(t, e.c.Join(bg, g, "member-b"))
				_, err := e.c.Rebalance(bg, g, "gone")
				must(t, err)
				_, err = e.c.Rebalance(bg, g, "orders")
				must(t, err)
				e.topics.remove("gone")
			},
			wantMembers: map[string][]string{g: {"member-b"}},
			wantSaved: map[string][]Assignment{
				g + "/gone":   {asg("member-a", "gone", 0), asg("member-b", "gone", 1)},
				g + "/orders": {asg("member-b", "orders", 0, 1, 2, 3)},
			},
		},
		{
			name: "nothing stale: nothing recomputed",
			setup: func(e *env) {
				e.clock.Set(at(11, 58))
				must(t, e.c.Join(bg, g, "member-a"))
				// A saved assignment that a recomputation would change.
				_, err := e.c.Rebalance(bg, g, "orders")
				must(t, err)
				must(t, e.c.Join(bg, g, "member-b"))
			},
			wantMembers: map[string][]string{g: {"member-a", "member-b"}},
			wantSaved:   map[string][]Assignment{g + "/orders": {asg("member-a", "orders", 0, 1, 2, 3)}},
		},
		{
			name: "several groups, each on its own",
			setup: func(e *env) {
				e.clock.Set(at(11, 0))
				must(t, e.c.Join(bg, "g1", "old"))
				must(t, e.c.Join(bg, "g2", "old"))
				e.clock.Set(at(11, 59))
				must(t, e.c.Join(bg, "g1", "new"))
				_, err := e.c.Rebalance(bg, "g1", "orders")
				must(t, err)
				_, err = e.c.Rebalance(bg, "g2", "orders")
				must(t, err)
			},
			wantMembers: map[string][]string{"g1": {"new"}},
			wantSaved:   map[string][]Assignment{"g1/orders": {asg("new", "orders", 0, 1, 2, 3)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tt.setup(e)
			must(t, e.c.CleanupOnce(bg, noon))
			for _, c := range []*Coordinator{e.c, e.restart()} {
				gotMembers := map[string][]string{}
				for _, id := range groupsWithMembers(c) {
					m, _ := members(c, id)
					gotMembers[id] = ids(m)
				}
				if !reflect.DeepEqual(gotMembers, tt.wantMembers) {
					t.Fatalf("members = %v, want %v", gotMembers, tt.wantMembers)
				}
				gotSaved := map[string][]Assignment{}
				for _, id := range c.groupIDs() {
					topics, _ := c.AssignmentTopics(id)
					for _, topic := range topics {
						a, _, _ := c.SavedAssignment(id, topic)
						gotSaved[id+"/"+topic] = a
					}
				}
				if !reflect.DeepEqual(gotSaved, tt.wantSaved) {
					t.Fatalf("saved = %+v\nwant %+v", gotSaved, tt.wantSaved)
				}
			}
		})
	}
}

func TestCleanupOnceUsesGroupAndMemberSessionTimeouts(t *testing.T) {
	e := newEnv(t)
	e.clock.Set(at(11, 0))
	must(t, e.c.Join(bg, "short", "m"))
	must(t, e.c.Join(bg, "default", "m"))
	_, err := e.c.SetConfig(bg, "short", GroupConfig{SessionTimeout: 30 * time.Second})
	must(t, err)
	e.clock.Set(at(11, 1)) // one minute later: stale only under 30 s
	must(t, e.c.CleanupOnce(bg, e.clock.Now()))
	if got := groupsWithMembers(e.c); !reflect.DeepEqual(got, []string{"default"}) {
		t.Fatalf("groups = %v, want [default]", got)
	}
	must(t, e.c.CleanupOnce(bg, at(11, 5)))
	if got := groupsWithMembers(e.c); len(got) != 1 {
		t.Fatalf("exactly 5 minutes is not stale; groups = %v", got)
	}
	must(t, e.c.CleanupOnce(bg, at(11, 6)))
	if got := groupsWithMembers(e.c); len(got) != 0 {
		t.Fatalf("groups = %v, want none", got)
	}

	// A protocol member's own session timeout wins over the group default.
	e.clock.Set(at(12, 0))
	res, err := e.c.JoinGroup(bg, JoinRequest{Group: "proto", Topics: []string{"orders"}, SessionTimeout: 10 * time.Second})
	must(t, err)
	must(t, e.c.CleanupOnce(bg, at(12, 0).Add(10*time.Second)))
	if m, _ := members(e.c, "proto"); len(m) != 1 {
		t.Fatal("member removed before its session expired")
	}
	must(t, e.c.CleanupOnce(bg, at(12, 0).Add(11*time.Second)))
	if m, _ := members(e.c, "proto"); len(m) != 0 {
		t.Fatalf("member %s outlived its session", res.MemberID)
	}

	// The group's configured session timeout is enforced over the member's.
	_, err = e.c.SetConfig(bg, "enforced", GroupConfig{SessionTimeout: time.Minute})
	must(t, err)
	_, err = e.c.JoinGroup(bg, JoinRequest{Group: "enforced", Topics: []string{"orders"}, SessionTimeout: 10 * time.Second})
	must(t, err)
	must(t, e.c.CleanupOnce(bg, at(12, 0).Add(59*time.Second)))
	if m, _ := members(e.c, "enforced"); len(m) != 1 {
		t.Fatal("member removed before the group's session timeout")
	}
	must(t, e.c.CleanupOnce(bg, at(12, 1).Add(time.Second)))
	if m, _ := members(e.c, "enforced"); len(m) != 0 {
		t.Fatal("member outlived the group's session timeout")
	}
}

func TestRunCleanup(t *testing.T) {
	e := newEnv(t)
	e.cfg.CleanupInterval = 5 * time.Millisecond
	c := e.newCoordinator()
	defer c.Close()
	e.clock.Set(at(11, 0))
	must(t, c.Join(bg, g1, "m"))
	e.clock.Set(noon)
	ctx, cancel := context.WithCancel(bg)
	done := make(chan struct{})
	go func() { c.RunCleanup(ctx, nil); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for len(groupsWithMembers(c)) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the background pass never removed the stale member")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
}

const g1 = "g1"
