package replica

import (
	"container/heap"
	"context"
	"time"
)

// ackWaiters are the acks=all produces waiting for the high watermark to
// cover their batch, ordered by the offset each needs covered (Kafka's
// produce purgatory, keyed by offset): a move of the high watermark wakes
// exactly the produces it completes, however many others wait, and a
// change of role wakes them all to find out. The partition guards it with
// its mu.
type ackWaiters []*ackWaiter

// ackWaiter is one waiting produce: woken is closed when the high
// watermark passes last or the role changes.
type ackWaiter struct {
	last  int64
	woken chan struct{}
	index int // in the heap; -1 once woken or removed
}

func (w ackWaiters) Len() int           { return len(w) }
func (w ackWaiters) Less(i, j int) bool { return w[i].last < w[j].last }
func (w ackWaiters) Swap(i, j int) {
	w[i], w[j] = w[j], w[i]
	w[i].index, w[j].index = i, j
}
func (w *ackWaiters) Push(x any) {
	a := x.(*ackWaiter)
	a.index = len(*w)
	*w = append(*w, a)
}
func (w *ackWaiters) Pop() any {
	old := *w
	a := old[len(old)-1]
	old[len(old)-1] = nil
	*w = old[:len(old)-1]
	a.index = -1
	return a
}

// add queues a produce that needs the high watermark above last.
func (w *ackWaiters) add(last int64) *ackWaiter {
	a := &ackWaiter{last: last, woken: make(chan struct{})}
	heap.Push(w, a)
	return a
}

// remove takes out a produce that stopped waiting (timeout, cancel).
func (w *ackWaiters) remove(a *ackWaiter) {
	if a.index >= 0 {
		heap.Remove(w, a.index)
	}
}

// release wakes the produces the high watermark hw covers.
func (w *ackWaiters) release(hw int64) {
	for len(*w) > 0 && (*w)[0].last < hw {
		close(heap.Pop(w).(*ackWaiter).woken)
	}
}

// releaseAll wakes every produce: the role changed.
func (w *ackWaiters) releaseAll() {
	for len(*w) > 0 {
		close(heap.Pop(w).(*ackWaiter).woken)
	}
}

// waitReplicated waits for acks=all: until the high watermark passes last
// while this replica still leads with epoch.
func (p *partition) waitReplicated(ctx context.Context, last int64, epoch int32, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.hw <= last {
		if p.closed || p.role != roleLeader || p.state.LeaderEpoch != epoch {
			return p.notLeaderLocked()
		}
		a := p.ackWaiters.add(last)
		p.mu.Unlock()
		var err error
		select {
		case <-a.woken:
		case <-t.C:
			err = ErrTimeout
		case <-ctx.Done():
			err = ctx.Err()
		}
		p.mu.Lock()
		if err != nil {
			p.ackWaiters.remove(a)
			return err
		}
	}
	if len(p.state.ISR) < p.minISR {
		// The ISR shrank below the minimum while we waited: the batch is
		// on fewer replicas than asked for (Kafka's
		// NOT_ENOUGH_REPLICAS_AFTER_APPEND).
		return ErrNotEnoughReplicasAfterAppend
	}
	return nil
}
