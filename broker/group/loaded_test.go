package group

import (
	"slices"
	"testing"
	"time"
)

// TestLoadedCoordinatorGivesReplayedMembersAFullSession: the coordinator's
// broker dies and the journal partition's new leader loads the group 40 s
// later, longer than the group's 30 s session. No member could reach a
// coordinator meanwhile, so none is expired for it: every replayed member
// gets a full session from the load, and one that never comes back is
// removed a session after the load. Likewise a rebalance the journal left
// waiting gets a full rebalance timeout from the load, instead of ending at
// once and dropping the members that had no coordinator to rejoin.
func TestLoadedCoordinatorGivesReplayedMembersAFullSession(t *testing.T) {
	e := newEnv(t)
	const g = "workers"
	_, err := e.c.SetConfig(bg, g, GroupConfig{SessionTimeout: 30 * time.Second})
	must(t, err)
	join := JoinRequest{Group: g, ClientID: "app", Topics: []string{"orders"}}
	first, err := e.c.JoinGroup(bg, join)
	must(t, err)
	stay, leave := join, join
	stay.MemberID = first.MemberID
	res := grow(t, e.c, []JoinRequest{stay}, []JoinRequest{leave})
	for _, r := range res {
		_, err := e.c.SyncGroup(bg, g, r.MemberID, r.Generation)
		must(t, err)
	}
	must(t, e.c.Join(bg, g, "simple"))
	staying, leaving := res[0].MemberID, res[1].MemberID

	e.clock.Advance(40 * time.Second)
	c := e.restart()
	must(t, c.CleanupOnce(bg, e.clock.Now()))
	want := []string{leaving, "simple", staying}
	slices.Sort(want)
	if got := memberIDs(t, c, g); !slices.Equal(got, want) {
		t.Fatalf("members right after the load: %v, want all of %v", got, want)
	}

	// Two members reach the new coordinator; the third never does.
	e.clock.Advance(20 * time.Second)
	must(t, c.HeartbeatGroup(bg, g, staying, res[0].Generation))
	must(t, c.Heartbeat(bg, g, "simple"))
	e.clock.Advance(11 * time.Second)
	must(t, c.CleanupOnce(bg, e.clock.Now()))
	want = []string{"simple", staying}
	slices.Sort(want)
	if got := memberIDs(t, c, g); !slices.Equal(got, want) {
		t.Fatalf("members a session after the load: %v, want %v", got, want)
	}
	d, err := c.Describe(bg, g, nil)
	must(t, err)
	if d.State != PreparingRebalance {
		t.Fatalf("state after a member expired: %s, want PreparingRebalance", d.State)
	}

	// The coordinator moves again during that rebalance, for longer than
	// its timeout.
	e.clock.Advance(40 * time.Second)
	c = e.restart()
	must(t, c.CleanupOnce(bg, e.clock.Now()))
	if d, err := c.Describe(bg, g, nil); err != nil || d.State != PreparingRebalance || d.Generation != res[0].Generation {
		t.Fatalf("after the second load: %+v, %v; want the rebalance still waiting for generation %d's members", d, err, res[0].Generation)
	}
	stay.MemberID = staying
	again, err := c.JoinGroup(bg, stay)
	must(t, err)
	if again.Generation != res[0].Generation+1 || again.Leader != staying {
		t.Fatalf("rejoin after the load: %+v", again)
	}
}

func memberIDs(t *testing.T, c *Coordinator, group string) []string {
	t.Helper()
	ms, err := members(c, group)
	must(t, err)
	return ids(ms)
}
