package group

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"
)

// joinAll runs the joins concurrently, as clients do, and returns their
// results in request order.
func joinAll(t testing.TB, c *Coordinator, reqs ...JoinRequest) []JoinResult {
	t.Helper()
	return grow(t, c, reqs, nil)
}

// grow runs the joins of newcomers and, once they have started a rebalance,
// the rejoins of existing members (as clients do when a heartbeat answers
// ErrRebalanceInProgress). Results come in the order existing, newcomers.
func grow(t testing.TB, c *Coordinator, existing, newcomers []JoinRequest) []JoinResult {
	t.Helper()
	reqs := append(append([]JoinRequest{}, existing...), newcomers...)
	out := make([]JoinResult, len(reqs))
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	for i := len(existing); i < len(reqs); i++ {
		wg.Go(func() { out[i], errs[i] = c.JoinGroup(bg, reqs[i]) })
	}
	if len(newcomers) > 0 && len(existing) > 0 {
		waitJoins(t, c, reqs[0].Group, len(newcomers))
	}
	for i := range existing {
		wg.Go(func() { out[i], errs[i] = c.JoinGroup(bg, reqs[i]) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("join %d (%q): %v", i, reqs[i].MemberID, err)
		}
	}
	return out
}

func ordersJoin(member string) JoinRequest {
	return JoinRequest{Group: "analytics-workers", MemberID: member, ClientID: "kairoctl", Topics: []string{"orders"}}
}

func TestJoinSyncHeartbeat(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	res, err := e.c.JoinGroup(bg, ordersJoin(""))
	must(t, err)
	a := res.MemberID
	if res.Generation != 1 || res.Leader != a || res.Group != g ||
		!reflect.DeepEqual(res.Members, []JoinedMember{{ID: a, Topics: []string{"orders"}}}) {
		t.Fatalf("join = %+v", res)
	}
	if d, _ := e.c.Describe(bg, g, nil); d.State != CompletingRebalance {
		t.Fatalf("state before sync = %v", d.State)
	}
	got, err := e.c.SyncGroup(bg, g, a, 1)
	must(t, err)
	if !reflect.DeepEqual(got, tps("orders", 0, 1, 2, 3)) {
		t.Fatalf("sync = %+v", got)
	}
	if d, _ := e.c.Describe(bg, g, nil); d.State != Stable {
		t.Fatalf("state after sync = %v", d.State)
	}
	must(t, e.c.HeartbeatGroup(bg, g, a, 1))

	// A second member: the first learns of the rebalance from its heartbeat.
	joinB := make(chan JoinResult, 1)
	go func() {
		r, err := e.c.JoinGroup(bg, ordersJoin(""))
		if err != nil {
			t.Error(err)
		}
		joinB <- r
	}()
	waitState(t, e.c, g, PreparingRebalance)
	wantErr(t, e.c.HeartbeatGroup(bg, g, a, 1), ErrRebalanceInProgress)
	_, err = e.c.SyncGroup(bg, g, a, 1)
	wantErr(t, err, ErrRebalanceInProgress)
	resA, err := e.c.JoinGroup(bg, ordersJoin(a))
	must(t, err)
	resB := <-joinB
	b := resB.MemberID
	if resA.Generation != 2 || resB.Generation != 2 || resA.Leader != a || resB.Leader != a {
		t.Fatalf("generation 2: a=%+v b=%+v", resA, resB)
	}
	if !reflect.DeepEqual(resA.Members, resB.Members) || len(resA.Members) != 2 {
		t.Fatalf("members differ: %+v / %+v", resA.Members, resB.Members)
	}
	lo, hi := a, b
	if hi < lo {
		lo, hi = hi, lo
	}
	syncLo, err := e.c.SyncGroup(bg, g, lo, 2)
	must(t, err)
	syncHi, err := e.c.SyncGroup(bg, g, hi, 2)
	must(t, err)
	if !reflect.DeepEqual(syncLo, tps("orders", 0, 1)) || !reflect.DeepEqual(syncHi, tps("orders", 2, 3)) {
		t.Fatalf("range over two members: %v %v", syncLo, syncHi)
	}
	wantErr(t, e.c.HeartbeatGroup(bg, g, a, 1), ErrIllegalGeneration)
	must(t, e.c.HeartbeatGroup(bg, g, b, 2))

	// A non-leader rejoining with the same subscription gets the current
	// generation at once.
	nonLeader := b
	if b == a {
		t.Fatal("same member id twice")
	}
	again, err := e.c.JoinGroup(bg, ordersJoin(nonLeader))
	must(t, err)
	if again.Generation != 2 {
		t.Fatalf("rejoin = %+v, want generation 2", again)
	}
	if d, _ := e.c.Describe(bg, g, nil); d.State != Stable {
		t.Fatalf("state = %v after an unchanged rejoin", d.State)
	}
}

// waitState waits until a group reaches a state.
func waitState(t testing.TB, c *Coordinator, g string, want State) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, err := c.Describe(bg, g, nil)
		if err == nil && d.State == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s never reached %v (now %v, %v)", g, want, d.State, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitJoins waits until n joins wait for a group's rebalance.
func waitJoins(t testing.TB, c *Coordinator, group string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		g, err := c.lockGroup(group, false)
		must(t, err)
		waiting := 0
		if g != nil {
			waiting = len(g.joins)
			c.unlockGroup(g)
		}
		if waiting == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d joins waiting in %s, want %d", waiting, group, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// consume runs a client's loop (join, sync, heartbeat; join again when told
// to) until ctx ends, reporting each assignment it gets.
func consume(ctx context.Context, c *Coordinator, group string, topics []string, got chan<- string) error {
	member := ""
	for ctx.Err() == nil {
		res, err := c.JoinGroup(ctx, JoinRequest{Group: group, MemberID: member, Topics: topics, RebalanceTimeout: 5 * time.Second})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("join: %w", err)
		}
		member = res.MemberID
		assignment, err := c.SyncGroup(ctx, group, member, res.Generation)
		for err == nil && ctx.Err() == nil {
			select {
			case got <- fmt.Sprintf("%s@%d=%v", member, res.Generation, assignment):
			default:
			}
			time.Sleep(time.Millisecond)
			err = c.HeartbeatGroup(ctx, group, member, res.Generation)
		}
		if err != nil && !errors.Is(err, ErrRebalanceInProgress) && !errors.Is(err, ErrIllegalGeneration) {
			return fmt.Errorf("member %s: %w", member, err)
		}
	}
	return nil
}

func TestConcurrentJoinsConverge(t *testing.T) {
	for _, strategy := range []string{StrategyRange, StrategyRoundRobin} {
		t.Run(strategy, func(t *testing.T) {
			e := newEnv(t)
			const g, n = "analytics-workers", 5
			e.topics.add("payments", 7)
			_, err := e.c.SetConfig(bg, g, GroupConfig{AssignmentStrategy: strategy})
			must(t, err)
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for range n {
				wg.Go(func() { errs <- consume(ctx, e.c, g, []string{"orders", "payments"}, make(chan string)) })
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				d, err := e.c.Describe(bg, g, nil)
				must(t, err)
				if d.State == Stable && len(d.Members) == n {
					checkCovers(t, d, map[string]int32{"orders": 4, "payments": 7})
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no stable generation of %d members: %+v", n, d)
				}
				time.Sleep(2 * time.Millisecond)
			}
			cancel()
			wg.Wait()
			close(errs)
			for err := range errs {
				must(t, err)
			}
		})
	}
}

// checkCovers checks a described generation assigns every partition once.
func checkCovers(t *testing.T, d Description, topics map[string]int32) {
	t.Helper()
	owner := map[TopicPartition]string{}
	for _, m := range d.Members {
		for _, tp := range m.Assignment {
			for _, p := range tp.Partitions {
				k := TopicPartition{tp.Topic, p}
				if prev, dup := owner[k]; dup {
					t.Fatalf("%v assigned to %s and %s", k, prev, m.ID)
				}
				owner[k] = m.ID
			}
		}
	}
	want := 0
	for _, n := range topics {
		want += int(n)
	}
	if len(owner) != want {
		t.Fatalf("%d partitions assigned, want %d: %+v", len(owner), want, d.Members)
	}
}

func TestRebalanceTimeoutDropsMembersThatDoNotRejoin(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	req := ordersJoin("")
	req.RebalanceTimeout = 50 * time.Millisecond
	a, err := e.c.JoinGroup(bg, req)
	must(t, err)
	start := time.Now()
	b, err := e.c.JoinGroup(bg, req) // a never rejoins
	must(t, err)
	if waited := time.Since(start); waited < 40*time.Millisecond {
		t.Fatalf("join returned after %v, before the rebalance timeout", waited)
	}
	if b.Generation != 2 || b.Leader != b.MemberID || len(b.Members) != 1 {
		t.Fatalf("join = %+v, want generation 2 with b alone", b)
	}
	wantErr(t, e.c.HeartbeatGroup(bg, g, a.MemberID, 1), ErrUnknownMember)
	got, err := e.c.SyncGroup(bg, g, b.MemberID, 2)
	must(t, err)
	if !reflect.DeepEqual(got, tps("orders", 0, 1, 2, 3)) {
		t.Fatalf("sync = %v", got)
	}
}

func TestLeaveStartsRebalance(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	_, err := e.c.JoinGroup(bg, ordersJoin("member-x-unknown"))
	wantErr(t, err, ErrUnknownMember)
	first, err := e.c.JoinGroup(bg, ordersJoin(""))
	must(t, err)
	res := grow(t, e.c, []JoinRequest{ordersJoin(first.MemberID)}, []JoinRequest{ordersJoin("")})
	a, b := res[0], res[1]
	if a.Generation != 2 || b.Generation != 2 {
		t.Fatalf("generations %d %d", a.Generation, b.Generation)
	}
	must(t, e.c.LeaveGroup(bg, g, b.MemberID))
	wantErr(t, e.c.LeaveGroup(bg, g, b.MemberID), ErrUnknownMember)
	wantErr(t, e.c.HeartbeatGroup(bg, g, a.MemberID, 2), ErrRebalanceInProgress)
	again, err := e.c.JoinGroup(bg, ordersJoin(a.MemberID))
	must(t, err)
	if again.Generation != 3 || len(again.Members) != 1 {
		t.Fatalf("after leave: %+v", again)
	}
	got, _ := e.c.SyncGroup(bg, g, a.MemberID, 3)
	if !reflect.DeepEqual(got, tps("orders", 0, 1, 2, 3)) {
		t.Fatalf("sync = %v", got)
	}

	// The last member leaving empties the generation.
	must(t, e.c.LeaveGroup(bg, g, a.MemberID))
	d, err := e.c.Describe(bg, g, nil)
	if err == nil {
		t.Fatalf("group without members, offsets or config still described: %+v", d)
	}
	wantErr(t, err, ErrUnknownGroup)
}

func TestProtocolErrors(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	res, err := e.c.JoinGroup(bg, ordersJoin(""))
	must(t, err)
	m := res.MemberID
	must(t, e.c.Join(bg, g, "simple"))
	tests := []struct {
		name string
		op   func() error
		want error
	}{
		{"sync unknown group", func() error { _, err := e.c.SyncGroup(bg, "nope", m, 1); return err }, ErrUnknownMember},
		{"sync unknown member", func() error { _, err := e.c.SyncGroup(bg, g, "nope", 1); return err }, ErrUnknownMember},
		{"sync old generation", func() error { _, err := e.c.SyncGroup(bg, g, m, 0); return err }, ErrIllegalGeneration},
		{"sync future generation", func() error { _, err := e.c.SyncGroup(bg, g, m, 2); return err }, ErrIllegalGeneration},
		{"sync simple member", func() error { _, err := e.c.SyncGroup(bg, g, "simple", 1); return err }, ErrIllegalGeneration},
		{"heartbeat unknown member", func() error { return e.c.HeartbeatGroup(bg, g, "nope", 1) }, ErrUnknownMember},
		{"heartbeat illegal generation", func() error { return e.c.HeartbeatGroup(bg, g, m, 7) }, ErrIllegalGeneration},
		{"heartbeat simple member", func() error { return e.c.HeartbeatGroup(bg, g, "simple", 1) }, ErrIllegalGeneration},
		{"heartbeat empty member", func() error { return e.c.HeartbeatGroup(bg, g, " ", 1) }, ErrInvalidArgument},
		{"leave unknown member", func() error { return e.c.LeaveGroup(bg, g, "nope") }, ErrUnknownMember},
		{"join unknown member", func() error { _, err := e.c.JoinGroup(bg, ordersJoin("nope")); return err }, ErrUnknownMember},
		{"join no topics", func() error {
			_, err := e.c.JoinGroup(bg, JoinRequest{Group: g})
			return err
		}, ErrInvalidArgument},
		{"join blank topic", func() error {
			_, err := e.c.JoinGroup(bg, JoinRequest{Group: g, Topics: []string{" "}})
			return err
		}, ErrInvalidArgument},
		{"join negative session timeout", func() error {
			_, err := e.c.JoinGroup(bg, JoinRequest{Group: g, Topics: []string{"orders"}, SessionTimeout: -1})
			return err
		}, ErrInvalidArgument},
		{"join no group", func() error { _, err := e.c.JoinGroup(bg, JoinRequest{Topics: []string{"orders"}}); return err }, ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantErr(t, tt.op(), tt.want) })
	}
}

func TestSimpleMembersAndProtocolMembersCoexist(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	must(t, e.c.Join(bg, g, "member-s"))
	// A simple member is not waited for.
	res, err := e.c.JoinGroup(bg, ordersJoin(""))
	must(t, err)
	if res.Generation != 1 || len(res.Members) != 1 {
		t.Fatalf("join = %+v", res)
	}
	// Both are members: listing, the original rebalance, describe.
	members, _ := members(e.c, g)
	if len(members) != 2 {
		t.Fatalf("members = %v", members)
	}
	saved, err := e.c.Rebalance(bg, g, "orders")
	must(t, err)
	if len(saved) != 2 {
		t.Fatalf("original rebalance over %d members, want 2", len(saved))
	}
	// Adding or removing a simple member does not disturb the generation.
	must(t, e.c.Join(bg, g, "member-t"))
	must(t, e.c.LeaveGroup(bg, g, "member-t"))
	must(t, e.c.HeartbeatGroup(bg, g, res.MemberID, 1))
	// A simple member joining the protocol with its id is promoted.
	joined := grow(t, e.c, []JoinRequest{ordersJoin(res.MemberID)}, []JoinRequest{ordersJoin("member-s")})
	if joined[1].Generation != 2 || len(joined[1].Members) != 2 || joined[1].MemberID != "member-s" {
		t.Fatalf("promotion: %+v", joined[1])
	}
	// The original Leave of a protocol member starts a rebalance.
	must(t, e.c.LeaveGroup(bg, g, "member-s"))
	wantErr(t, e.c.HeartbeatGroup(bg, g, res.MemberID, 2), ErrRebalanceInProgress)
}

func TestCancelledJoinIsWithdrawn(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	a, err := e.c.JoinGroup(bg, ordersJoin(""))
	must(t, err)
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() { _, err := e.c.JoinGroup(ctx, ordersJoin("")); done <- err }()
	waitState(t, e.c, g, PreparingRebalance)
	if m, _ := members(e.c, g); len(m) != 2 {
		t.Fatalf("joining member not listed: %v", m)
	}
	cancel()
	wantErr(t, <-done, context.Canceled)
	if m, _ := members(e.c, g); len(m) != 1 || m[0].ID != a.MemberID {
		t.Fatalf("withdrawn member still listed: %v", m)
	}
	// The rebalance it started completes with the members that rejoin.
	res, err := e.c.JoinGroup(bg, ordersJoin(a.MemberID))
	must(t, err)
	if res.Generation != 2 || len(res.Members) != 1 {
		t.Fatalf("join = %+v", res)
	}
}

func TestCloseAnswersWaitingJoins(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	_, err := e.c.JoinGroup(bg, ordersJoin(""))
	must(t, err)
	done := make(chan error, 1)
	go func() { _, err := e.c.JoinGroup(bg, ordersJoin("")); done <- err }()
	waitState(t, e.c, g, PreparingRebalance)
	e.c.Close()
	wantErr(t, <-done, ErrCoordinatorNotAvailable)
	wantErr(t, e.c.Join(bg, g, "x"), ErrCoordinatorNotAvailable)
	_, err = e.c.Describe(bg, g, nil)
	wantErr(t, err, ErrCoordinatorNotAvailable)
}

func TestStaleProtocolMemberTriggersRebalance(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	req := ordersJoin("")
	req.SessionTimeout = 10 * time.Second
	first, err := e.c.JoinGroup(bg, req)
	must(t, err)
	r1, r2 := req, req
	r1.MemberID = first.MemberID
	res := grow(t, e.c, []JoinRequest{r1}, []JoinRequest{r2})
	a, b := res[0], res[1]

	// a keeps heartbeating, b goes silent.
	for range 11 {
		e.clock.Advance(time.Second)
		must(t, e.c.HeartbeatGroup(bg, g, a.MemberID, a.Generation))
	}
	must(t, e.c.CleanupOnce(bg, e.clock.Now()))
	wantErr(t, e.c.HeartbeatGroup(bg, g, b.MemberID, b.Generation), ErrUnknownMember)
	wantErr(t, e.c.HeartbeatGroup(bg, g, a.MemberID, a.Generation), ErrRebalanceInProgress)
	r1.MemberID = a.MemberID
	next, err := e.c.JoinGroup(bg, r1)
	must(t, err)
	if next.Generation != a.Generation+1 || len(next.Members) != 1 {
		t.Fatalf("after expiry: %+v", next)
	}
}

func TestStrategyChangeStartsRebalance(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	e.topics.add("payments", 3)
	req := JoinRequest{Group: g, Topics: []string{"orders", "payments"}}
	first, err := e.c.JoinGroup(bg, req)
	must(t, err)
	ra, rb := req, req
	ra.MemberID = first.MemberID
	res := grow(t, e.c, []JoinRequest{ra}, []JoinRequest{rb})
	cfg, err := e.c.SetConfig(bg, g, GroupConfig{AssignmentStrategy: StrategyRoundRobin})
	must(t, err)
	if cfg.AssignmentStrategy != StrategyRoundRobin || cfg.SessionTimeout != DefaultSessionTimeout {
		t.Fatalf("config = %+v", cfg)
	}
	wantErr(t, e.c.HeartbeatGroup(bg, g, res[0].MemberID, res[0].Generation), ErrRebalanceInProgress)
	ra.MemberID, rb.MemberID = res[0].MemberID, res[1].MemberID
	joinAll(t, e.c, ra, rb)
	d, err := e.c.Describe(bg, g, nil)
	must(t, err)
	if d.AssignmentStrategy != StrategyRoundRobin || d.Generation != 3 {
		t.Fatalf("describe = %+v", d)
	}
	checkCovers(t, d, map[string]int32{"orders": 4, "payments": 3})
	_, err = e.c.SetConfig(bg, g, GroupConfig{AssignmentStrategy: "sticky"})
	wantErr(t, err, ErrInvalidArgument)
}
