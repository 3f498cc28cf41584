package memory

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestChargeWaitWaitsForMemory: a charge that does not fit waits until
// another request releases, and one that can never fit fails at once.
func TestChargeWaitWaitsForMemory(t *testing.T) {
	p := NewPool("queued.max.request.bytes", 100, 20)
	holder := NewAccount(false)
	if err := holder.Charge(p, 70); err != nil {
		t.Fatal(err)
	}
	waiter := NewAccount(false)
	done := make(chan error, 1)
	go func() { done <- waiter.ChargeWait(context.Background(), p, 50) }()
	select {
	case err := <-done:
		t.Fatalf("charged 50 of a pool with 10 shared bytes free: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	holder.Release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after the release: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting after the release")
	}
	if p.InUse() != 50 {
		t.Fatalf("in use %d, want 50", p.InUse())
	}
	waiter.Release()

	for _, c := range []struct {
		small bool
		n     int64
	}{{false, 81}, {true, 81}} {
		err := NewAccount(c.small).ChargeWait(context.Background(), p, c.n)
		if !errors.Is(err, ErrNeverFits) {
			t.Errorf("small=%v, %d bytes of a pool of 100 (20 reserved): %v, want ErrNeverFits", c.small, c.n, err)
		}
	}
	if err := NewAccount(true).ChargeWait(context.Background(), p, 80); err != nil {
		t.Errorf("a small request may hold the shared part: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := NewAccount(false).ChargeWait(ctx, p, 10); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting on a full pool past the deadline: %v", err)
	}
}
