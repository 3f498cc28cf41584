package replica

import (
	"sync"
	"testing"
)

// A follower's full request replaces its session at once, and may race
// another full request of the same follower (a restarted follower, a
// request it gave up on). The replaced session's partitions are let go
// only after the request holding it is done with them: applying a
// request to a session another request has just replaced must not find
// its partitions already cleared.
func TestFullRequestsOfOneFollowerRaceSafely(t *testing.T) {
	c := newSessionCache()
	req := sessionRequest{
		ReplicaID: 2, MaxBytes: 1 << 20,
		Partitions: []sessionPartitionRequest{{Topic: "orders", Partition: 0, LeaderEpoch: 1}},
	}
	for range 2000 {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				s, err := c.open(req)
				if err != nil {
					t.Errorf("full request: %v", err)
					return
				}
				defer s.mu.Unlock()
				s.apply(req)
				if len(s.parts) != 1 || len(s.unsettled) != 1 {
					t.Errorf("session after a full request of one partition: %d partitions, %d unsettled", len(s.parts), len(s.unsettled))
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
	}
}
