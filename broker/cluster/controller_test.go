package cluster

import (
	"slices"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// An idle controller does not scan the partitions of an image it has
// already planned on, tick after tick; the next image does get a pass,
// and what it calls for (here the moves of a drain, which nothing but
// the controller's planning starts) follows within a few ticks.
func TestControllerPlansOncePerImage(t *testing.T) {
	c := newTestCluster(t, 3)
	c.startAll()
	c.waitReady()
	c.syncISRs()
	n0 := c.node(0)
	if _, err := n0.CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "t", Partitions: 12, ReplicationFactor: 2}); err != nil {
		t.Fatal(err)
	}
	ctlNode := c.controller()
	ctl, err := ctlNode.controller()
	if err != nil {
		t.Fatal(err)
	}
	c.eventually(10*time.Second, "every ISR to hold both replicas", func() bool {
		for _, p := range ctlNode.Image().Topic("t").Partitions {
			if len(p.ISR) != 2 {
				return false
			}
		}
		return true
	})

	// Idle: some ticks, no new image, no pass (before, every tick was one).
	time.Sleep(2 * DefaultHeartbeatInterval) // the pass on the last ISR change
	img, plans := ctlNode.Image(), ctl.plans.Load()
	idle := 8 * DefaultHeartbeatInterval / 2
	time.Sleep(idle)
	if after := ctlNode.Image(); after == img {
		if n := ctl.plans.Load() - plans; n != 0 {
			t.Errorf("controller scanned an unchanged image %d times in %v idle (%d ticks)", n, idle, idle/(DefaultHeartbeatInterval/2))
		}
	} else {
		t.Logf("the image changed while idle (index %d to %d); the idle check proves nothing this run", img.Index, after.Index)
	}

	// An event: a broker marked draining, its moves not planned yet (the
	// drain operation plans them with the command; here only the flag is
	// committed, as when that first plan failed). Only the controller's
	// planning on the new image moves the replicas.
	victim := (ctlNode.ID() + 1) % 3
	if err := ctlNode.brokerCommand(ctxTimeout(t, 5*time.Second), metadata.CmdDrain, victim); err != nil {
		t.Fatal(err)
	}
	took := c.eventually(10*time.Second, "the drained broker's replicas to be moved", func() bool {
		for _, p := range ctlNode.Image().Topic("t").Partitions {
			if slices.Contains(p.Target(), victim) {
				return false
			}
		}
		return true
	})
	t.Logf("moves planned %v after the drain was committed", took.Round(time.Millisecond))
}
