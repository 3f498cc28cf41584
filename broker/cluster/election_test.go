package cluster

import (
	"testing"
	"time"
)

// TestSoleVoterElectsItselfAtOnce gives a one-voter quorum a heartbeat
// timeout far longer than the test waits: the broker must stand for
// election without waiting for it, on its first start and on a restart
// with raft state. Voters of a larger quorum keep waiting (see
// electIfSoleVoter), which the three-voter tests cover.
func TestSoleVoterElectsItselfAtOnce(t *testing.T) {
	c := newTestCluster(t, 1)
	cfg := c.config(0, "")
	cfg.RaftHeartbeatTimeout = time.Minute
	cfg.RaftElectionTimeout = time.Minute
	for _, run := range []string{"first start", "restart"} {
		if run == "restart" {
			c.stop(0)
		}
		n := c.start(cfg)
		c.eventually(20*time.Second, "the sole voter to be controller and ready ("+run+")", func() bool {
			return n.IsController() && n.Ready() == nil
		})
	}
}
