package fault

import (
	"context"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// TestAdminRequestsMoveOffAStalledController: the controller's process is
// frozen (SIGSTOP), so it keeps its connections open and answers nothing,
// and the other two brokers elect another. A topic delete sent to one of
// them, which passes it on to the controller, must reach the new one and
// answer, not wait out its whole retry window on the frozen process.
func TestAdminRequestsMoveOffAStalledController(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the broker and runs three processes")
	}
	procs := newCluster(t, 3, "offsets.topic.num.partitions=1\n")
	startAll(t, procs)
	ctx := context.Background()
	for _, name := range []string{"first", "second"} {
		if _, err := procs[0].client.CreateTopic(ctx, api.CreateTopicRequest{Name: name, Partitions: 1, ReplicationFactor: 3}); err != nil {
			t.Fatal(err)
		}
	}
	waitISR(t, procs, "first", 3)
	waitISR(t, procs, "second", 3)

	for _, name := range []string{"first", "second"} {
		controller := knownController(t, procs, name)
		via := procs[(controller+1)%3]
		procs[controller].pause(t)
		start := time.Now()
		err := via.client.DeleteTopic(ctx, name)
		took := time.Since(start)
		procs[controller].resume(t)
		if err != nil {
			t.Fatalf("delete %s through broker %d while controller %d is frozen: %v after %v", name, via.id, controller, err, took.Round(time.Millisecond))
		}
		t.Logf("deleted %s through broker %d in %v while controller %d was frozen", name, via.id, took.Round(time.Millisecond), controller)
		for _, p := range procs {
			p.waitReady(t, time.Minute)
		}
	}
}

// knownController waits until the metadata names a controller: right after
// the frozen one resumes, the quorum may still be electing and a broker
// answers -1.
func knownController(t *testing.T, procs []*brokerProc, name string) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, controller := partitionLeadership(t, procs, name); controller >= 0 {
			return controller
		}
		if time.Now().After(deadline) {
			t.Fatal("no broker names a controller after a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
