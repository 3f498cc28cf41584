package cluster

import (
	"testing"
	"time"
)

// TestRestartWithinTheSessionEndsTheOldLeaderships: a broker crashes and
// comes back before the controller notices (the session timeout is long
// here). Every partition it led gets a new leader epoch when it registers
// again, so no leadership of the crashed process goes on in its old epoch
// with a log that may have lost its unflushed tail.
func TestRestartWithinTheSessionEndsTheOldLeaderships(t *testing.T) {
	c := newTestCluster(t, 3)
	for _, v := range c.voters {
		cfg := c.config(v.ID, "")
		cfg.SessionTimeout = time.Minute
		c.start(cfg)
	}
	c.waitReady()
	c.syncISRs()
	if _, err := c.node(0).CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "events", Partitions: 6, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	ctl := c.controller()
	victim := -1
	led := map[int]int{} // partition → leader epoch, of the partitions victim leads
	for _, p := range ctl.Image().Topic("events").Partitions {
		if p.Leader != ctl.ID() && (victim < 0 || p.Leader == victim) {
			victim = p.Leader
			led[p.ID] = p.LeaderEpoch
		}
	}
	if victim < 0 {
		t.Fatal("the controller leads every partition")
	}
	registered := ctl.Image().Broker(victim).Epoch

	c.crash(victim)
	c.restart(victim)
	c.eventually(20*time.Second, "the restarted broker to register again", func() bool {
		b := c.controller().Image().Broker(victim)
		return b != nil && b.Epoch > registered
	})
	if b := c.controller().Image().Broker(victim); b.Fenced {
		t.Fatalf("broker %d was fenced before it registered again; the test needs it not to be", victim)
	}
	img := c.controller().Image()
	for id, epoch := range led {
		if p := img.Partition("events", id); p.LeaderEpoch <= epoch {
			t.Errorf("partition %d, led by broker %d before its restart: leader %d in epoch %d, not newer than %d",
				id, victim, p.Leader, p.LeaderEpoch, epoch)
		}
	}
}
