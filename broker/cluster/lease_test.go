package cluster

import (
	"testing"
	"time"
)

// The metadata lease holds on every broker of a running cluster, vouching
// for an image the broker has; a broker cut off from the controller (its
// two peers stopped, so no quorum) loses it within the session timeout
// plus a heartbeat, and a stall of the process (simulated: the watchdog's
// last tick moved back) loses it until a heartbeat sent after the stall is
// answered.
func TestMetadataLease(t *testing.T) {
	c := newTestCluster(t, 3)
	c.startAll()
	c.waitReady()
	for _, n := range c.running() {
		c.eventually(5*time.Second, "the lease on every broker", func() bool {
			index, ok := n.MetadataLease()
			return ok && index > 0 && n.Image().Index >= index
		})
	}

	n := c.node(0)
	n.lease.mu.Lock()
	n.lease.lastTick = time.Now().Add(-2 * n.stallThreshold())
	n.lease.mu.Unlock()
	if _, ok := n.MetadataLease(); ok {
		t.Fatal("the lease holds while the watchdog has not ticked for twice the stall threshold")
	}
	took := c.eventually(5*time.Second, "the lease back after the stall", func() bool {
		_, ok := n.MetadataLease()
		return ok
	})
	t.Logf("lease back %v after the stall ended", took.Round(time.Millisecond))

	c.stop(1)
	c.stop(2)
	start := time.Now()
	c.eventually(n.cfg.SessionTimeout+5*time.Second, "broker 0 to lose the lease without a quorum", func() bool {
		_, ok := n.MetadataLease()
		return !ok
	})
	t.Logf("lease lost %v after the peers stopped", time.Since(start).Round(time.Millisecond))
}
