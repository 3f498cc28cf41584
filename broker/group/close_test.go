package group

import (
	"context"
	"sync"
	"testing"
	"time"
)

// stall makes the calls it is armed for block until their context ends or
// the test releases them, as a partition leader on a stopped broker or a
// journal append waiting for followers that never answer does.
type stall struct {
	mu      sync.Mutex
	armed   bool
	entered chan struct{} // receives once per blocked call
	release chan struct{}
}

func newStall() *stall {
	return &stall{entered: make(chan struct{}, 16), release: make(chan struct{})}
}

func (s *stall) arm() {
	s.mu.Lock()
	s.armed = true
	s.mu.Unlock()
}

// wait blocks an armed call.
func (s *stall) wait(ctx context.Context) error {
	s.mu.Lock()
	armed := s.armed
	s.mu.Unlock()
	if !armed {
		return nil
	}
	s.entered <- struct{}{}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-s.release:
		return nil
	}
}

// waitEntered waits until a call is blocked.
func (s *stall) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-s.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the call never reached the slow leader or journal")
	}
}

// slowTopics are fakeTopics whose offsets come from a slow leader.
type slowTopics struct {
	*fakeTopics
	s *stall
}

func (f slowTopics) Bounds(ctx context.Context, topic string, p int32) (Bounds, error) {
	if err := f.s.wait(ctx); err != nil {
		return Bounds{}, err
	}
	return f.fakeTopics.Bounds(ctx, topic, p)
}

func (f slowTopics) OffsetForTimestamp(ctx context.Context, topic string, p int32, ts int64) (int64, error) {
	if err := f.s.wait(ctx); err != nil {
		return 0, err
	}
	return f.fakeTopics.OffsetForTimestamp(ctx, topic, p, ts)
}

// slowJournal is a journal whose appends wait for followers.
type slowJournal struct {
	MemoryJournal
	s *stall
}

func (j *slowJournal) Append(ctx context.Context, group string, record []byte) error {
	if err := j.s.wait(ctx); err != nil {
		return err
	}
	return j.MemoryJournal.Append(ctx, group, record)
}

// slowEnv is a coordinator whose partition leaders and journal can be made
// slow, with group g holding a committed offset of orders-0.
func slowEnv(t *testing.T) (*env, *stall, *stall) {
	leaders, journal := newStall(), newStall()
	e := &env{t: t, clock: &fakeClock{t: noon}, topics: newFakeTopics()}
	e.topics.add("orders", 4)
	e.cfg = Config{Journal: &slowJournal{s: journal}, Partitions: slowTopics{e.topics, leaders}, Now: e.clock.Now}
	e.c = e.newCoordinator()
	t.Cleanup(e.c.Close)
	must(t, e.c.CommitOffsets(bg, CommitRequest{Group: "analytics-workers", Generation: NoGeneration,
		Offsets: []OffsetCommit{{Topic: "orders", Partition: 0, Offset: 3}}}))
	return e, leaders, journal
}

// TestCloseDoesNotWaitForSlowCalls: whatever an operation waits for — a
// partition leader on another broker, a journal append — Close returns at
// once (the broker calls it from the goroutine that applies metadata),
// cuts the wait short with COORDINATOR_NOT_AVAILABLE, and Drained tells
// when the operation has let go of the group. Before Close took no group
// lock, Close waited for the reset and the commit as long as their calls
// did.
func TestCloseDoesNotWaitForSlowCalls(t *testing.T) {
	const g = "analytics-workers"
	tests := []struct {
		name string
		slow func(leaders, journal *stall) *stall
		op   func(c *Coordinator) error
	}{
		{"reset reading a slow leader", func(l, _ *stall) *stall { return l }, func(c *Coordinator) error {
			_, err := c.ResetOffsets(bg, g, ResetRequest{To: ResetEarliest, Topics: []string{"orders"}})
			return err
		}},
		{"reset to a timestamp reading a slow leader", func(l, _ *stall) *stall { return l }, func(c *Coordinator) error {
			_, err := c.ResetOffsets(bg, g, ResetRequest{To: ResetTimestamp, Timestamp: ptr[int64](0), Topics: []string{"orders"}})
			return err
		}},
		{"describe reading a slow leader", func(l, _ *stall) *stall { return l }, func(c *Coordinator) error {
			_, err := c.Describe(bg, g, nil)
			return err
		}},
		{"commit waiting for the journal", func(_, j *stall) *stall { return j }, func(c *Coordinator) error {
			return c.CommitOffsets(bg, CommitRequest{Group: g, Generation: NoGeneration,
				Offsets: []OffsetCommit{{Topic: "orders", Partition: 1, Offset: 7}}})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, leaders, journal := slowEnv(t)
			s := tt.slow(leaders, journal)
			defer close(s.release) // lets a stuck call go if an assertion failed
			s.arm()
			opDone := make(chan error, 1)
			go func() { opDone <- tt.op(e.c) }()
			s.waitEntered(t)

			closed := make(chan struct{})
			go func() { e.c.Close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(10 * time.Second):
				t.Fatal("Close waited for the slow call")
			}
			select {
			case err := <-opDone:
				wantErr(t, err, ErrCoordinatorNotAvailable)
			case <-time.After(10 * time.Second):
				t.Fatal("the operation still waits after Close")
			}
			select {
			case <-e.c.Drained():
			case <-time.After(10 * time.Second):
				t.Fatal("Drained never closed")
			}
		})
	}
}

// TestResetReadsOffsetsWithoutTheGroupLock: while a reset waits for a slow
// partition leader, the group keeps serving; a member that joins meanwhile
// makes the reset fail as if it had been there from the start. Before the
// reads moved out of the group's lock, the commit below waited for the
// reset.
func TestResetReadsOffsetsWithoutTheGroupLock(t *testing.T) {
	const g = "analytics-workers"
	e, leaders, _ := slowEnv(t)
	leaders.arm()
	resetDone := make(chan error, 1)
	go func() {
		_, err := e.c.ResetOffsets(bg, g, ResetRequest{To: ResetEarliest, Topics: []string{"orders"}})
		resetDone <- err
	}()
	leaders.waitEntered(t)

	served := make(chan error, 1)
	go func() {
		err := e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: NoGeneration,
			Offsets: []OffsetCommit{{Topic: "orders", Partition: 2, Offset: 9}}})
		if err == nil {
			err = e.c.Join(bg, g, "member-a")
		}
		served <- err
	}()
	select {
	case err := <-served:
		must(t, err)
	case <-time.After(10 * time.Second):
		close(leaders.release)
		t.Fatal("the group waited for the reset's reads")
	}

	close(leaders.release)
	wantErr(t, <-resetDone, ErrNonEmptyGroup)
	if co, ok, err := e.c.Offset(g, "orders", 2); err != nil || !ok || co.Offset != 9 {
		t.Fatalf("orders-2 = %+v %v %v, want the commit made during the reset", co, ok, err)
	}
}

// TestDescribeEndsWithItsRequest: a describe waiting for a slow leader
// returns when its request's context ends.
func TestDescribeEndsWithItsRequest(t *testing.T) {
	e, leaders, _ := slowEnv(t)
	defer close(leaders.release)
	leaders.arm()
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() { _, err := e.c.Describe(ctx, "analytics-workers", nil); done <- err }()
	leaders.waitEntered(t)
	cancel()
	select {
	case err := <-done:
		wantErr(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("describe ignored its request's end")
	}
}
