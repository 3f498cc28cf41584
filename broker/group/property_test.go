package group

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"sync"
	"testing"
	"time"
)

// invariants checks a group's state at the end of every operation, with the
// group's lock held:
//   - within the current generation's members, no partition is assigned
//     twice, and once the generation is settled every partition of every
//     subscribed topic is assigned;
//   - only protocol members have an assignment, and the leader is one;
//   - every waiting join belongs to a member;
//   - a group's generation never goes back while the group exists.
type invariants struct {
	t          testing.TB
	partitions *fakeTopics
	mu         sync.Mutex
	generation map[string]int32
}

func (inv *invariants) check(g *group) {
	inv.mu.Lock()
	if g.isEmpty() {
		delete(inv.generation, g.id) // dropped: a later group starts again
	} else {
		if last, ok := inv.generation[g.id]; ok && g.generation < last {
			inv.t.Errorf("group %s: generation went from %d to %d", g.id, last, g.generation)
		}
		inv.generation[g.id] = g.generation
	}
	inv.mu.Unlock()

	owner := map[TopicPartition]string{}
	subscribed := map[string]bool{}
	protocol := 0
	for id, m := range g.members {
		if !m.protocol {
			if len(m.assignment) > 0 {
				inv.t.Errorf("group %s: simple member %s has an assignment", g.id, id)
			}
			continue
		}
		protocol++
		for _, topic := range m.topics {
			subscribed[topic] = true
		}
		for _, tp := range m.assignment {
			for _, p := range tp.Partitions {
				k := TopicPartition{tp.Topic, p}
				if prev, dup := owner[k]; dup {
					inv.t.Errorf("group %s generation %d: %v assigned to %s and %s", g.id, g.generation, k, prev, id)
				}
				owner[k] = id
			}
		}
	}
	for id := range g.joins {
		if g.members[id] == nil {
			inv.t.Errorf("group %s: join of %s, which is not a member", g.id, id)
		}
	}
	if g.state != CompletingRebalance && g.state != Stable || protocol == 0 {
		return
	}
	if m := g.members[g.leader]; m == nil || !m.protocol {
		inv.t.Errorf("group %s generation %d: leader %q is not a member of it", g.id, g.generation, g.leader)
	}
	want := 0
	for topic := range subscribed {
		n, _ := inv.partitions.PartitionCount(topic)
		want += int(n)
	}
	if len(owner) != want {
		inv.t.Errorf("group %s generation %d (%v): %d of %d partitions assigned", g.id, g.generation, g.state, len(owner), want)
	}
}

// randomClient acts as a consumer that joins, syncs, heartbeats, commits,
// leaves and rejoins at random, and checks that the generations it is
// given never go back.
func randomClient(ctx context.Context, t testing.TB, c *Coordinator, r *rand.Rand, group string, steps int) {
	var member string
	gen := int32(-1)
	last := map[string]int32{}
	expected := func(op string, err error) {
		switch {
		case err == nil, errors.Is(err, ErrRebalanceInProgress), errors.Is(err, ErrIllegalGeneration),
			errors.Is(err, context.DeadlineExceeded):
			if err != nil {
				gen = -1
			}
		case errors.Is(err, ErrUnknownMember):
			member, gen = "", -1
		default:
			t.Errorf("%s: unexpected error %v", op, err)
		}
	}
	topicSets := [][]string{{"orders"}, {"payments"}, {"orders", "payments"}}
	for i := 0; i < steps && ctx.Err() == nil; i++ {
		switch k := r.Intn(20); {
		case gen < 0 || k == 0:
			jctx, cancel := context.WithTimeout(ctx, time.Duration(5+r.Intn(80))*time.Millisecond)
			res, err := c.JoinGroup(jctx, JoinRequest{Group: group, MemberID: member, Topics: topicSets[r.Intn(3)],
				SessionTimeout: 30 * time.Second, RebalanceTimeout: time.Duration(10+r.Intn(30)) * time.Millisecond})
			cancel()
			if err == nil {
				if res.Generation < last[res.MemberID] {
					t.Errorf("member %s: generation %d after %d", res.MemberID, res.Generation, last[res.MemberID])
				}
				last[res.MemberID] = res.Generation
				member, gen = res.MemberID, res.Generation
			}
			expected("join", err)
		case k == 1:
			expected("leave", c.LeaveGroup(ctx, group, member))
			member, gen = "", -1
		case k < 6:
			_, err := c.SyncGroup(ctx, group, member, gen)
			expected("sync", err)
		case k < 10:
			err := c.CommitOffsets(ctx, CommitRequest{Group: group, MemberID: member, Generation: gen,
				Offsets: []OffsetCommit{{Topic: "orders", Partition: int32(r.Intn(4)), Offset: int64(r.Intn(100))}}})
			expected("commit", err)
		default:
			expected("heartbeat", c.HeartbeatGroup(ctx, group, member, gen))
		}
		time.Sleep(time.Duration(r.Intn(2000)) * time.Microsecond)
	}
}

// randomAdmin uses the original API and the admin operations at random,
// moving the clock so that members expire.
func randomAdmin(ctx context.Context, t testing.TB, e *env, r *rand.Rand, group string, steps int) {
	c := e.c
	expected := func(op string, err error) {
		if err != nil && !errors.Is(err, ErrNoActiveMembers) && !errors.Is(err, ErrNonEmptyGroup) && !errors.Is(err, ErrUnknownGroup) {
			t.Errorf("%s: unexpected error %v", op, err)
		}
	}
	for i := 0; i < steps && ctx.Err() == nil; i++ {
		simple := fmt.Sprintf("simple-%d", r.Intn(3))
		switch r.Intn(12) {
		case 0:
			expected("join", c.Join(ctx, group, simple))
		case 1:
			expected("heartbeat", c.Heartbeat(ctx, group, simple))
		case 2:
			if err := c.LeaveGroup(ctx, group, simple); !errors.Is(err, ErrUnknownMember) {
				expected("leave", err)
			}
		case 3:
			strategies := []string{StrategyRange, StrategyRoundRobin, ""}
			_, err := c.SetConfig(ctx, group, GroupConfig{AssignmentStrategy: strategies[r.Intn(3)]})
			expected("config", err)
		case 4, 5:
			e.clock.Advance(time.Duration(r.Intn(15)) * time.Second)
			expected("cleanup", c.CleanupOnce(ctx, e.clock.Now()))
		case 6:
			_, err := c.Rebalance(ctx, group, "orders")
			expected("rebalance", err)
		case 7:
			_, err := c.RemoveStaleMembers(ctx, group, 20*time.Second)
			expected("remove stale", err)
		case 8:
			_, err := c.ResetOffsets(ctx, group, ResetRequest{To: ResetEarliest, Topics: []string{"orders"}})
			expected("reset", err)
		case 9:
			expected("commit", c.CommitOffsets(ctx, CommitRequest{Group: group, Generation: NoGeneration,
				Offsets: []OffsetCommit{{Topic: "payments", Partition: int32(r.Intn(7)), Offset: int64(r.Intn(100))}}}))
		case 10:
			_ = c.Snapshot()
		case 11:
			_, err := c.Describe(bg, group, []string{"payments"})
			expected("describe", err)
		}
		time.Sleep(time.Duration(r.Intn(3000)) * time.Microsecond)
	}
}

func TestRandomOperationsKeepInvariants(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			e := newEnv(t)
			e.topics.add("payments", 7)
			inv := &invariants{t: t, partitions: e.topics, generation: map[string]int32{}}
			e.c.onUnlock = inv.check
			ctx, cancel := context.WithTimeout(bg, 20*time.Second)
			defer cancel()
			const g = "analytics-workers"
			var wg sync.WaitGroup
			for i := range 4 {
				r := rand.New(rand.NewSource(seed*100 + int64(i)))
				wg.Go(func() { randomClient(ctx, t, e.c, r, g, 150) })
			}
			r := rand.New(rand.NewSource(seed))
			wg.Go(func() { randomAdmin(ctx, t, e, r, g, 150) })
			wg.Wait()
			if ctx.Err() != nil {
				t.Fatal("operations did not finish in time")
			}

			if d, err := e.c.Describe(bg, g, nil); err == nil {
				t.Logf("generation %d, %d members, state %v, %d journal records", d.Generation, len(d.Members), d.State, len(e.journal.Records()))
			}
			// Quiet now: everyone expires, the last rebalance ends, and the
			// journal replays to exactly the live state.
			must(t, e.c.CleanupOnce(bg, e.clock.Now().Add(time.Hour)))
			must(t, e.c.CleanupOnce(bg, e.clock.Now().Add(2*time.Hour)))
			c := e.restart()
			c.onUnlock = inv.check
			if got, want := view(c), view(e.c); !reflect.DeepEqual(got, want) {
				t.Fatalf("replayed journal differs:\n%+v\nlive\n%+v", got, want)
			}
		})
	}
}
