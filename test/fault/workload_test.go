package fault

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairolog/kairolog/broker/client"
)

// workload produces with acks=all from several goroutines, each record
// with a value no other record has, and commits a consumer group's offset
// every 100 ms. It records what the cluster acknowledged.
type workload struct {
	procs []*brokerProc
	topic string
	group string

	mu sync.Mutex
	// acked maps each acknowledged value to the offset it was given.
	acked map[string]int64
	// events are acknowledged produces: when they were sent and answered.
	events []ackEvent
	errors int
	// Commits: the last acknowledged one and the largest one attempted
	// (a commit that failed may still have been stored).
	lastCommitAcked    int64
	maxCommitAttempted int64
	commitErrors       int
	rr                 atomic.Uint64
	cancel             context.CancelFunc
	wg                 sync.WaitGroup
}

type ackEvent struct{ sent, acked time.Time }

func newWorkload(procs []*brokerProc, topic, group string) *workload {
	return &workload{procs: procs, topic: topic, group: group, acked: map[string]int64{}, lastCommitAcked: -1}
}

// pick returns the next running broker in turn.
func (w *workload) pick() *brokerProc {
	for range len(w.procs) {
		p := w.procs[int(w.rr.Add(1))%len(w.procs)]
		if p.running() {
			return p
		}
	}
	return w.procs[0]
}

func (w *workload) start(producers int) {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	for i := range producers {
		w.wg.Go(func() { w.produce(ctx, i) })
	}
	w.wg.Go(func() { w.commit(ctx) })
}

func (w *workload) stop() {
	w.cancel()
	w.wg.Wait()
}

func (w *workload) produce(ctx context.Context, id int) {
	partition := int32(0)
	for seq := 0; ctx.Err() == nil; seq++ {
		value := fmt.Sprintf("producer-%d-record-%d", id, seq)
		sent := time.Now()
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := w.pick().client.Produce(rctx, client.ProduceRequest{Topic: w.topic, Partition: &partition,
			Message: value, Acks: client.AcksAll, TimeoutMs: 5000})
		cancel()
		w.mu.Lock()
		if err == nil && resp.Offset != nil {
			w.acked[value] = *resp.Offset
			w.events = append(w.events, ackEvent{sent, time.Now()})
		} else if ctx.Err() == nil {
			w.errors++
		}
		w.mu.Unlock()
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

func (w *workload) commit(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for next := int64(1); ; next++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.mu.Lock()
		w.maxCommitAttempted = next
		w.mu.Unlock()
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := w.pick().client.CommitOffset(rctx, w.group, w.topic, 0, next)
		cancel()
		w.mu.Lock()
		if err == nil {
			w.lastCommitAcked = next
		} else if ctx.Err() == nil {
			w.commitErrors++
		}
		w.mu.Unlock()
	}
}

// firstAckAfter waits until a produce sent after t is acknowledged and
// returns how long after t that was.
func (w *workload) firstAckAfter(t time.Time, timeout time.Duration) (time.Duration, bool) {
	deadline := time.Now().Add(timeout)
	for {
		w.mu.Lock()
		var first time.Time
		for i := len(w.events) - 1; i >= 0 && w.events[i].acked.After(t); i-- {
			if e := w.events[i]; !e.sent.Before(t) && (first.IsZero() || e.acked.Before(first)) {
				first = e.acked
			}
		}
		w.mu.Unlock()
		if !first.IsZero() {
			return first.Sub(t), true
		}
		if time.Now().After(deadline) {
			return 0, false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ackedCount is the number of acknowledged records so far.
func (w *workload) ackedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}
