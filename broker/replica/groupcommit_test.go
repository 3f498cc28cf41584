package replica

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/storage"
)

// Produces that arrive while the leader writes share the next write and its
// fsync: 32 single-record acks=all produces queued behind a write in
// progress cost two fsyncs with flush.messages=1, not 32, and each is
// still its own batch at its own offset on every replica.
func TestConcurrentProducesShareOneWrite(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", map[string]string{"flush.messages": "1"})
	waitLeader(t, bs[0], "orders")
	p, err := bs[0].manager().partition("orders", 0)
	if err != nil {
		t.Fatal(err)
	}

	// Hold the writer: the first produce takes the write and waits for
	// the role lock; the other 31 queue behind it.
	p.roleMu.Lock()
	const producers = 32
	var wg sync.WaitGroup
	offsets := make([]int64, producers)
	for i := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base, last, err := bs[0].manager().Produce(context.Background(), "orders", 0,
				[]storage.Record{{Value: []byte(fmt.Sprintf("r%d", i))}}, AcksAll, 10*time.Second)
			if err != nil || base != last {
				t.Errorf("produce %d: %d-%d %v", i, base, last, err)
			}
			offsets[i] = base
		}()
	}
	eventually(t, 5*time.Second, "31 produces to queue behind the write", func() bool {
		p.appends.mu.Lock()
		defer p.appends.mu.Unlock()
		return len(p.appends.waiting) == producers-1
	})
	p.roleMu.Unlock()
	wg.Wait()

	slices.Sort(offsets)
	for i, o := range offsets {
		if o != int64(i) {
			t.Fatalf("offsets %v, want 0..%d each once", offsets, producers-1)
		}
	}
	if n := p.log.Flushes(); n != 2 {
		t.Errorf("fsyncs for 32 produces written in two groups with flush.messages=1: %d, want 2", n)
	}
	for _, b := range bs {
		eventually(t, 5*time.Second, fmt.Sprintf("broker %d to hold all 32", b.id), func() bool {
			return info(t, b, "orders").LogEndOffset == producers
		})
		bp, err := b.manager().partition("orders", 0)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := bp.log.ReadRaw(0, -1, 0)
		if err != nil {
			t.Fatal(err)
		}
		batches := 0
		for len(raw) > 0 {
			h, err := storage.ParseBatchHeader(raw)
			if err != nil {
				t.Fatal(err)
			}
			if h.RecordCount != 1 {
				t.Errorf("broker %d: batch at %d holds %d records, want one per produce", b.id, h.BaseOffset, h.RecordCount)
			}
			batches++
			raw = raw[h.Size():]
		}
		if batches != producers {
			t.Errorf("broker %d: %d batches, want %d", b.id, batches, producers)
		}
	}
}

// A produce that cannot be written fails alone; the others of its group
// are written.
func TestOneBadProduceDoesNotFailItsGroup(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", map[string]string{"max.message.bytes": "1024"})
	waitLeader(t, bs[0], "orders")
	p, err := bs[0].manager().partition("orders", 0)
	if err != nil {
		t.Fatal(err)
	}
	p.roleMu.Lock()
	results := make([]error, 3)
	var wg sync.WaitGroup
	for i, size := range []int{10, 4096, 10} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, results[i] = bs[0].manager().Produce(context.Background(), "orders", 0,
				[]storage.Record{{Value: make([]byte, size)}}, AcksLeader, time.Second)
		}()
		if i == 0 {
			eventually(t, 5*time.Second, "the first produce to take the write", func() bool {
				p.appends.mu.Lock()
				defer p.appends.mu.Unlock()
				return p.appends.writing
			})
		}
	}
	eventually(t, 5*time.Second, "two produces to queue", func() bool {
		p.appends.mu.Lock()
		defer p.appends.mu.Unlock()
		return len(p.appends.waiting) == 2
	})
	p.roleMu.Unlock()
	wg.Wait()
	if results[0] != nil || results[2] != nil || !errors.Is(results[1], storage.ErrBatchTooLarge) {
		t.Errorf("results %v, want the large one alone to fail with ErrBatchTooLarge", results)
	}
	if leo := info(t, bs[0], "orders").LogEndOffset; leo != 2 {
		t.Errorf("log end %d, want the two small records", leo)
	}
}

func TestAckWaitersWakeOnlyWhatTheHighWatermarkCovers(t *testing.T) {
	var w ackWaiters
	a5, a1, a3, a2 := w.add(5), w.add(1), w.add(3), w.add(2)
	woken := func(a *ackWaiter) bool {
		select {
		case <-a.woken:
			return true
		default:
			return false
		}
	}
	w.release(2) // covers offset 1 only
	if !woken(a1) || woken(a2) || woken(a3) || woken(a5) {
		t.Fatalf("release(2): woke %v %v %v %v, want only the waiter for offset 1", woken(a1), woken(a2), woken(a3), woken(a5))
	}
	w.remove(a3) // timed out
	w.release(4)
	if !woken(a2) || woken(a3) || woken(a5) {
		t.Fatalf("release(4): woke 2:%v 3:%v 5:%v, want 2 only (3 left)", woken(a2), woken(a3), woken(a5))
	}
	w.releaseAll()
	if !woken(a5) || woken(a3) || w.Len() != 0 {
		t.Fatalf("releaseAll: 5 woken %v, removed 3 woken %v, %d left", woken(a5), woken(a3), w.Len())
	}
}
