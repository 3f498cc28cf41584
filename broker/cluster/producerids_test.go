package cluster

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// TestProducerIDsNeverReused allocates producer id blocks from every
// broker at once, crashes the controller, restarts it and allocates more:
// no id is handed out twice, and the blocks after the failover continue
// past everything before it.
func TestProducerIDsNeverReused(t *testing.T) {
	c := newTestCluster(t, 3)
	c.startAll("a", "b", "c")
	c.waitReady()
	var mu sync.Mutex
	var blocks []ProducerIDBlock
	allocate := func(round int) {
		var wg sync.WaitGroup
		for _, n := range c.running() {
			for range 5 {
				wg.Go(func() {
					b, err := n.AllocateProducerIDs(ctxTimeout(t, 20*time.Second), 1000)
					if err != nil {
						t.Errorf("round %d: broker %d: %v", round, n.ID(), err)
						return
					}
					mu.Lock()
					blocks = append(blocks, b)
					mu.Unlock()
				})
			}
		}
		wg.Wait()
	}
	allocate(0)
	before := len(blocks)
	highest := int64(0)
	for _, b := range blocks {
		highest = max(highest, b.First+b.Count)
	}
	c.crash(c.controller().ID())
	allocate(1)
	for _, b := range blocks[before:] {
		if b.First < highest {
			t.Errorf("block %+v after the failover starts below %d, the end of the blocks before it", b, highest)
		}
	}
	c.restartStopped()
	c.waitReady()
	allocate(2)
	slices.SortFunc(blocks, func(a, b ProducerIDBlock) int { return int(a.First - b.First) })
	for i := 1; i < len(blocks); i++ {
		if prev := blocks[i-1]; prev.First+prev.Count > blocks[i].First {
			t.Fatalf("blocks %+v and %+v overlap", prev, blocks[i])
		}
	}
	if len(blocks) != 5*3+5*2+5*3 {
		t.Fatalf("%d blocks allocated", len(blocks))
	}
	// Every broker's image knows where the next block starts.
	last := blocks[len(blocks)-1]
	c.eventually(5*time.Second, "every broker to see the last block", func() bool {
		for _, n := range c.running() {
			if n.Image().NextProducerID != last.First+last.Count {
				return false
			}
		}
		return true
	})
}
