package cluster

import (
	"testing"
	"time"
)

// DeleteTopic answers once every broker has applied the deletion or is
// fenced: with one broker crashed (silent, not fenced yet), the delete
// waits until the controller has fenced it, and every running broker's
// image is without the topic when it returns.
func TestDeleteTopicWaitsForEveryBroker(t *testing.T) {
	c := newTestCluster(t, 3)
	c.startAll()
	c.waitReady()
	ctl := c.controller()
	if _, err := ctl.CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "doomed", Partitions: 1, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	victim := (ctl.ID() + 1) % 3
	c.crash(victim)
	start := time.Now()
	if err := ctl.DeleteTopic(ctxTimeout(t, 20*time.Second), "doomed"); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if b := ctl.Image().Broker(victim); !b.Fenced {
		t.Errorf("DeleteTopic returned after %v with crashed broker %d not fenced", took, victim)
	}
	for _, n := range c.running() {
		if n.Image().Topic("doomed") != nil {
			t.Errorf("broker %d still has the topic when DeleteTopic returned", n.ID())
		}
	}
	t.Logf("DeleteTopic with a crashed broker took %v (session timeout %v)", took.Round(time.Millisecond), ctl.cfg.SessionTimeout)
}
