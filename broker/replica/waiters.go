package replica

import (
	"context"
	"time"
)

// broadcast wakes every goroutine waiting for a condition on a partition to
// change, without polling: a waiter takes the current channel, re-checks its
// condition and then blocks on the channel; a change closes the channel and
// installs a fresh one. The owner (a partition) guards it with its own mutex.
type broadcast struct {
	ch chan struct{}
}

// wait returns the channel that the next notify closes.
func (b *broadcast) wait() <-chan struct{} {
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

// notify wakes every waiter taken since the previous notify.
func (b *broadcast) notify() {
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}

// waitFor blocks until ch is closed, ctx ends or the deadline passes. It
// reports whether ch was closed.
func waitFor(ctx context.Context, ch <-chan struct{}, deadline *time.Timer) (woken bool, err error) {
	select {
	case <-ch:
		return true, nil
	case <-deadline.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}
