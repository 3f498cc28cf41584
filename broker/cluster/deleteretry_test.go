package cluster

import (
	"testing"
	"time"
)

// TestDeleteTopicSentAgainAfterItCommitted: a controller commits a topic's
// delete and loses its leadership before it can answer; the broker that
// forwarded the request sends it again to the next controller. The second
// attempt must answer success, not UNKNOWN_TOPIC for the caller's own
// delete. A third attempt arriving after the topic was created again under
// the same name must leave the new topic alone.
func TestDeleteTopicSentAgainAfterItCommitted(t *testing.T) {
	c := newTestCluster(t, 1)
	c.startAll()
	c.waitReady()
	ctl := c.controller()
	old, err := ctl.CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "orders", Partitions: 1, ReplicationFactor: 1})
	if err != nil {
		t.Fatal(err)
	}
	req := TopicRequest{Name: "orders", ID: old.ID}
	for attempt := 1; attempt <= 2; attempt++ {
		if _, err := ctl.deleteTopic(ctxTimeout(t, 5*time.Second), req); err != nil {
			t.Fatalf("delete attempt %d: %v", attempt, err)
		}
	}
	if ctl.Image().Topic("orders") != nil {
		t.Fatal("orders still exists after its delete")
	}

	recreated, err := ctl.CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "orders", Partitions: 1, ReplicationFactor: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.deleteTopic(ctxTimeout(t, 5*time.Second), req); err != nil {
		t.Fatalf("a late attempt of the old delete: %v", err)
	}
	if got := ctl.Image().Topic("orders"); got == nil || got.ID != recreated.ID {
		t.Fatalf("a late attempt of the old topic's delete removed the topic created since (now %+v)", got)
	}
	// A delete of the topic by name, as a client sends it, still works.
	if err := ctl.DeleteTopic(ctxTimeout(t, 5*time.Second), "orders"); err != nil {
		t.Fatal(err)
	}
}
