package group

import (
	"bytes"
	"context"
	"reflect"
	"sync"
	"testing"
	"time"
)

// kafkaJoin is a join of a member that assigns, supporting protocols in
// that order of preference, each with metadata naming the protocol.
func kafkaJoin(member string, protocols ...string) JoinRequest {
	req := JoinRequest{Group: "ledger-readers", MemberID: member, ClientID: "kgo", ProtocolType: "consumer"}
	for _, p := range protocols {
		req.Protocols = append(req.Protocols, Protocol{Name: p, Metadata: []byte("md-" + p), Topics: []string{"orders"}})
	}
	return req
}

func TestSelectProtocol(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members map[string][]string // member -> protocols, preferred first
		want    string
		ok      bool
	}{
		{"one member: its first", map[string][]string{"a": {"sticky", "range"}}, "sticky", true},
		{"only a common one", map[string][]string{"a": {"sticky", "range"}, "b": {"range"}}, "range", true},
		{"the majority's first choice", map[string][]string{
			"a": {"range", "roundrobin"}, "b": {"roundrobin", "range"}, "c": {"roundrobin", "range"}}, "roundrobin", true},
		{"a vote goes to the first candidate, not the first protocol", map[string][]string{
			"a": {"sticky", "range", "roundrobin"}, "b": {"range", "roundrobin"}, "c": {"roundrobin", "range"}}, "range", true},
		{"a tie goes to the name that sorts first", map[string][]string{
			"a": {"roundrobin", "range"}, "b": {"range", "roundrobin"}}, "range", true},
		{"nothing in common", map[string][]string{"a": {"sticky"}, "b": {"range"}}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			joins := map[string]*pendingJoin{}
			var ids []string
			for id, ps := range tc.members {
				ids = append(ids, id)
				joins[id] = &pendingJoin{protocols: kafkaJoin(id, ps...).Protocols}
			}
			got, ok := selectProtocol(ids, joins)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("selectProtocol = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestInconsistentGroupProtocol: a member that supports none of the
// protocols every member supports, or whose protocol type differs (a Kafka
// consumer and the HTTP API's members), is refused and changes nothing;
// a member without protocols is refused too. Simple members never count.
func TestInconsistentGroupProtocol(t *testing.T) {
	e := newEnv(t)
	const g = "ledger-readers"
	first, err := e.c.JoinGroup(bg, kafkaJoin("", "sticky", "range"))
	must(t, err)
	if first.Protocol != "sticky" || first.ProtocolType != "consumer" || first.Generation != 1 {
		t.Fatalf("first join = %+v", first)
	}
	must(t, e.c.Join(bg, g, "seed-member")) // a simple member: outside every generation

	for name, req := range map[string]JoinRequest{
		"no common protocol":  kafkaJoin("", "roundrobin"),
		"another type":        {Group: g, ProtocolType: "connect", Protocols: []Protocol{{Name: "sticky"}}},
		"an HTTP API member":  {Group: g, Topics: []string{"orders"}},
		"no protocols at all": {Group: g, ProtocolType: "consumer"},
	} {
		_, err := e.c.JoinGroup(bg, req)
		wantErr(t, err, ErrInconsistentGroupProtocol)
		d, err := e.c.DescribeMembers(g)
		must(t, err)
		if d.State != CompletingRebalance || d.Generation != 1 || len(d.Members) != 2 {
			t.Fatalf("after the refused join (%s) the group is %+v", name, d)
		}
	}

	// The other way round: a Kafka consumer cannot join the HTTP API's
	// generation.
	_, err = e.c.JoinGroup(bg, ordersJoin(""))
	must(t, err)
	_, err = e.c.JoinGroup(bg, JoinRequest{Group: "analytics-workers", ProtocolType: "consumer", Protocols: []Protocol{{Name: "range"}}})
	wantErr(t, err, ErrInconsistentGroupProtocol)

	// Once the Kafka members are gone, the group takes any protocol again.
	must(t, e.c.LeaveGroup(bg, g, first.MemberID))
	res, err := e.c.JoinGroup(bg, kafkaJoin("", "roundrobin"))
	must(t, err)
	if res.Protocol != "roundrobin" {
		t.Fatalf("a join into the emptied group = %+v", res)
	}
}

// TestLeaderAssignsAndFollowersWait: the generation's protocol is the one
// both members support; the leader gets every member's metadata for it; a
// follower's Sync waits for the leader's; each member gets the bytes the
// leader gave it (none when left out) and Describe shows the partitions;
// a restarted coordinator, replaying the journal, hands out the same.
func TestLeaderAssignsAndFollowersWait(t *testing.T) {
	e := newEnv(t)
	const g = "ledger-readers"
	a, err := e.c.JoinGroup(bg, kafkaJoin("", "sticky", "range"))
	must(t, err)
	results := grow(t, e.c, []JoinRequest{kafkaJoin(a.MemberID, "sticky", "range")},
		[]JoinRequest{kafkaJoin("", "range", "sticky"), kafkaJoin("", "range")})
	leader := results[0]
	if leader.Generation != 2 || leader.Leader != a.MemberID || leader.Protocol != "range" || len(leader.Members) != 3 {
		t.Fatalf("generation 2 = %+v", leader)
	}
	for _, m := range leader.Members {
		if !bytes.Equal(m.Metadata, []byte("md-range")) || !reflect.DeepEqual(m.Topics, []string{"orders"}) {
			t.Fatalf("the leader sees member %+v, want its range metadata", m)
		}
	}
	b, c := results[1].MemberID, results[2].MemberID

	// b syncs before the leader: it waits.
	type answer struct {
		res SyncResult
		err error
	}
	waiting := make(chan answer, 1)
	go func() {
		r, err := e.c.Sync(bg, SyncRequest{Group: g, MemberID: b, Generation: 2, ProtocolType: "consumer", Protocol: "range"})
		waiting <- answer{r, err}
	}()
	waitFor(t, func() bool { return syncsWaiting(e.c, g) == 1 })
	select {
	case r := <-waiting:
		t.Fatalf("a follower's sync answered before the leader's: %+v", r)
	default:
	}
	_, err = e.c.Sync(bg, SyncRequest{Group: g, MemberID: a.MemberID, Generation: 2, Protocol: "sticky"})
	wantErr(t, err, ErrInconsistentGroupProtocol)

	lead, err := e.c.Sync(bg, SyncRequest{Group: g, MemberID: a.MemberID, Generation: 2, Assignments: []MemberAssignment{
		{MemberID: a.MemberID, Assignment: []byte("a-bytes"), Topics: tps("orders", 3, 0, 1, 1)},
		{MemberID: b, Assignment: []byte("b-bytes"), Topics: tps("orders", 2)},
		{MemberID: "not-a-member", Assignment: []byte("x")},
	}})
	must(t, err)
	got := <-waiting
	must(t, got.err)
	late, err := e.c.Sync(bg, SyncRequest{Group: g, MemberID: c, Generation: 2})
	must(t, err)
	if string(lead.MemberAssignment) != "a-bytes" || !reflect.DeepEqual(lead.Assignment, tps("orders", 0, 1, 3)) ||
		string(got.res.MemberAssignment) != "b-bytes" || !reflect.DeepEqual(got.res.Assignment, tps("orders", 2)) ||
		len(late.MemberAssignment) != 0 || len(late.Assignment) != 0 || late.Protocol != "range" {
		t.Fatalf("syncs: leader %+v, b %+v, c %+v", lead, got.res, late)
	}

	// A follower rejoining with the same protocols, whose chosen one is
	// not its first, stays in the generation.
	again, err := e.c.JoinGroup(bg, kafkaJoin(b, "range", "sticky"))
	must(t, err)
	if again.Generation != 2 || again.Protocol != "range" {
		t.Fatalf("an unchanged follower's rejoin = %+v, want generation 2", again)
	}

	// A snapshot of the group replays to the same state.
	snap := e.newCoordinator()
	t.Cleanup(snap.Close)
	for _, r := range e.c.Snapshot() {
		must(t, snap.Replay(r))
	}
	if live, replayed := view(e.c), view(snap); !reflect.DeepEqual(live, replayed) {
		t.Fatalf("the snapshot replays to\n%+v\nnot\n%+v", replayed, live)
	}

	want := map[string][]TopicPartitions{a.MemberID: tps("orders", 0, 1, 3), b: tps("orders", 2), c: tps("orders")}
	for name, co := range map[string]*Coordinator{"live": e.c, "replayed": e.restart()} {
		d, err := co.Describe(bg, g, nil)
		must(t, err)
		if d.State != Stable || d.Generation != 2 || d.ProtocolType != "consumer" || d.Protocol != "range" {
			t.Fatalf("%s: %+v", name, d)
		}
		for _, m := range d.Members {
			if !reflect.DeepEqual(m.Assignment, want[m.ID]) || !bytes.Equal(m.ProtocolMetadata, []byte("md-range")) {
				t.Fatalf("%s: member %+v, want %v", name, m, want[m.ID])
			}
		}
		r, err := co.Sync(bg, SyncRequest{Group: g, MemberID: b, Generation: 2})
		must(t, err)
		if string(r.MemberAssignment) != "b-bytes" {
			t.Fatalf("%s: b's sync = %+v", name, r)
		}
	}
}

// TestWaitingSyncEndsWithTheRebalance: a follower waiting for its leader's
// assignment is answered ErrRebalanceInProgress when a member leaves, and
// ErrCoordinatorNotAvailable when the coordinator closes.
func TestWaitingSyncEndsWithTheRebalance(t *testing.T) {
	for _, end := range []struct {
		name string
		do   func(e *env, leaving string)
		want error
	}{
		{"a member leaves", func(e *env, leaving string) { must(e.t, e.c.LeaveGroup(bg, "ledger-readers", leaving)) }, ErrRebalanceInProgress},
		{"the coordinator closes", func(e *env, _ string) { e.c.Close() }, ErrCoordinatorNotAvailable},
	} {
		t.Run(end.name, func(t *testing.T) {
			e := newEnv(t)
			a, err := e.c.JoinGroup(bg, kafkaJoin("", "range"))
			must(t, err)
			res := grow(t, e.c, []JoinRequest{kafkaJoin(a.MemberID, "range")}, []JoinRequest{kafkaJoin("", "range")})
			b := res[1].MemberID
			errc := make(chan error, 1)
			go func() {
				_, err := e.c.Sync(bg, SyncRequest{Group: "ledger-readers", MemberID: b, Generation: 2})
				errc <- err
			}()
			waitFor(t, func() bool { return syncsWaiting(e.c, "ledger-readers") == 1 })
			end.do(e, a.MemberID)
			select {
			case err := <-errc:
				wantErr(t, err, end.want)
			case <-time.After(5 * time.Second):
				t.Fatal("the waiting sync was not answered")
			}
		})
	}
}

// TestWaitingSyncWithdrawnWithItsContext: a waiting sync whose request
// ends is withdrawn, and the leader's sync later answers nobody twice.
func TestWaitingSyncWithdrawnWithItsContext(t *testing.T) {
	e := newEnv(t)
	a, err := e.c.JoinGroup(bg, kafkaJoin("", "range"))
	must(t, err)
	res := grow(t, e.c, []JoinRequest{kafkaJoin(a.MemberID, "range")}, []JoinRequest{kafkaJoin("", "range")})
	ctx, cancel := context.WithCancel(bg)
	var wg sync.WaitGroup
	var syncErr error
	wg.Go(func() {
		_, syncErr = e.c.Sync(ctx, SyncRequest{Group: "ledger-readers", MemberID: res[1].MemberID, Generation: 2})
	})
	waitFor(t, func() bool { return syncsWaiting(e.c, "ledger-readers") == 1 })
	cancel()
	wg.Wait()
	wantErr(t, syncErr, context.Canceled)
	if n := syncsWaiting(e.c, "ledger-readers"); n != 0 {
		t.Fatalf("%d syncs still waiting", n)
	}
	_, err = e.c.Sync(bg, SyncRequest{Group: "ledger-readers", MemberID: a.MemberID, Generation: 2})
	must(t, err)
}

// syncsWaiting counts the syncs waiting in group g.
func syncsWaiting(c *Coordinator, id string) int {
	g, err := c.lockGroup(id, false)
	if err != nil || g == nil {
		return 0
	}
	defer c.unlockGroup(g)
	return len(g.syncs)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
