package memory

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNeverFits is the error of a charge larger than the part of its pool a
// request of its size class may ever hold: waiting would never end.
var ErrNeverFits = errors.New("larger than the memory pool")

// ChargeWait charges n bytes of pool p like Charge, but waits while they do
// not fit instead of failing, until they do or ctx ends. A front door whose
// protocol has no "retry later" answer uses it to stop reading from a
// client until memory is free (Kafka mutes a connection so when its memory
// pool is exhausted). A charge that could never fit fails at once with
// ErrNeverFits.
//
// Waiting polls rather than queueing on the pool: a queued waiter would
// make every other request's Charge fail behind it.
func (a *Account) ChargeWait(ctx context.Context, p *Pool, n int64) error {
	if a == nil || n <= 0 {
		return nil
	}
	// A charge is taken whole from the shared part or, for a small
	// request, whole from the reserve.
	if n > p.size-p.reserve && (!a.small || n > p.reserve) {
		return fmt.Errorf("%w: %d bytes wanted, %s=%d", ErrNeverFits, n, p.name, p.size)
	}
	pause := time.Millisecond
	for {
		err := a.Charge(p, n)
		if !errors.Is(err, ErrExhausted) {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}
