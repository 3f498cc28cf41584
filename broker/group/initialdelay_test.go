package group

import (
	"context"
	"sync"
	"testing"
	"time"
)

// delayState reads the initial delay of group id: whether it holds the
// rebalance back, and how much later joiners may still extend it.
func delayState(c *Coordinator, id string) (delaying bool, left time.Duration) {
	g, err := c.lockGroup(id, false)
	if err != nil || g == nil {
		return false, 0
	}
	defer c.unlockGroup(g)
	return g.delaying(), g.delayLeft
}

// TestInitialDelayGathersConsumersStartingTogether: consumers that join an
// Empty group one after another form one first generation, as with
// Kafka's group.initial.rebalance.delay.ms: the first does not get a
// generation of its own, and one that joins after the first delay, while
// the delay is extended for the second, is in it too. Without the delay
// the first member's join returns at once with a generation of one.
func TestInitialDelayGathersConsumersStartingTogether(t *testing.T) {
	e := newEnv(t)
	e.cfg.InitialRebalanceDelay = 400 * time.Millisecond
	e.c = e.newCoordinator()
	t.Cleanup(e.c.Close)
	const g = "ledger-readers"

	results := make([]JoinResult, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	join := func(i int) { wg.Go(func() { results[i], errs[i] = e.c.JoinGroup(bg, kafkaJoin("", "range")) }) }
	join(0)
	waitJoins(t, e.c, g, 1)
	join(1)
	waitJoins(t, e.c, g, 2)
	// The second joined during the first delay: once that delay passes
	// another begins, shorter by nothing yet left of the timeout.
	waitFor(t, func() bool {
		delaying, left := delayState(e.c, g)
		return delaying && left < 10*time.Second-400*time.Millisecond
	})
	join(2)
	wg.Wait()
	for i, err := range errs {
		must(t, err)
		if r := results[i]; r.Generation != 1 || len(r.Members) != 0 && len(r.Members) != 3 {
			t.Fatalf("member %d joined %+v, want generation 1", i, r)
		}
	}
	d, err := e.c.Describe(bg, g, nil)
	must(t, err)
	if d.Generation != 1 || len(d.Members) != 3 || d.State != CompletingRebalance {
		t.Fatalf("the first generation is %d of %d members (%v), want 1 of 3", d.Generation, len(d.Members), d.State)
	}
}

// TestInitialDelayOnlyFromEmpty: the delay holds back only a first
// generation of members that assign. A member of the HTTP API that lets
// the coordinator assign joins at once, and a rebalance of a group that
// already has a generation completes as soon as everyone has rejoined.
func TestInitialDelayOnlyFromEmpty(t *testing.T) {
	e := newEnv(t)
	e.cfg.InitialRebalanceDelay = time.Hour
	e.c = e.newCoordinator()
	t.Cleanup(e.c.Close)

	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	simple, err := e.c.JoinGroup(ctx, JoinRequest{Group: "http-readers", Topics: []string{"orders"}})
	must(t, err)
	if simple.Generation != 1 {
		t.Fatalf("a member the coordinator assigns for joined %+v, want generation 1 at once", simple)
	}

	// A first generation formed without the delay, then the delay set:
	// a newcomer's rebalance is not a first one.
	e.c.initialDelay = 0
	a, err := e.c.JoinGroup(ctx, kafkaJoin("", "range"))
	must(t, err)
	e.c.initialDelay = time.Hour
	results := grow(t, e.c, []JoinRequest{kafkaJoin(a.MemberID, "range")}, []JoinRequest{kafkaJoin("", "range")})
	if results[0].Generation != 2 || len(results[0].Members) != 2 {
		t.Fatalf("the rebalance for a newcomer = %+v, want generation 2 of both members", results[0])
	}
	if delaying, _ := delayState(e.c, "ledger-readers"); delaying {
		t.Fatal("the delay still holds a group that has a generation")
	}
}
