package cluster

import (
	"testing"
	"time"
)

// TestControllerStallIsNoBrokerSilence: the controller's process stands
// still for twice the session timeout (simulated as the lease test does:
// the watchdog's last tick and every broker's last heartbeat moved back to
// the stall's start, as a pause that handled no heartbeat leaves them).
// When it runs again it fences nobody and moves no leadership: the brokers
// kept heartbeating, only nobody answered. A broker that really stops
// afterwards is still fenced once its session passes.
func TestControllerStallIsNoBrokerSilence(t *testing.T) {
	c := newTestCluster(t, 3)
	c.startAll()
	c.syncISRs()
	if _, err := c.node(0).CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "events", Partitions: 6, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	ctl := c.controller()
	epochs := map[int]int{}
	for _, p := range ctl.Image().Topic("events").Partitions {
		epochs[p.ID] = p.LeaderEpoch
	}

	stallStart := time.Now().Add(-2 * ctl.cfg.SessionTimeout)
	ctl.lease.mu.Lock()
	ctl.lease.lastTick = stallStart
	ctl.lease.mu.Unlock()
	ctl.ctlMu.Lock()
	cc := ctl.ctl
	ctl.ctlMu.Unlock()
	if cc == nil {
		t.Fatal("the controller node runs no controller")
	}
	cc.mu.Lock()
	cc.since = stallStart
	for id := range cc.seen {
		cc.seen[id] = stallStart
	}
	cc.mu.Unlock()
	cc.wake()

	// Fencing for the stall would come at the controller's next step; give
	// it a whole session.
	time.Sleep(ctl.cfg.SessionTimeout)
	img := ctl.Image()
	for _, id := range img.BrokerIDs() {
		if img.Broker(id).Fenced {
			t.Errorf("broker %d was fenced after the controller's own stall", id)
		}
	}
	for _, p := range img.Topic("events").Partitions {
		if p.LeaderEpoch != epochs[p.ID] {
			t.Errorf("partition %d changed leader after the controller's own stall: %s, epoch before %d", p.ID, describe(p), epochs[p.ID])
		}
	}

	var victim int
	for _, n := range c.running() {
		if n != ctl {
			victim = n.ID()
		}
	}
	c.crash(victim)
	took := c.eventually(ctl.cfg.SessionTimeout+10*time.Second, "the stopped broker to be fenced", func() bool {
		return ctl.Image().Broker(victim).Fenced
	})
	t.Logf("broker %d fenced %v after it stopped (session timeout %v)", victim, took.Round(time.Millisecond), ctl.cfg.SessionTimeout)
}
