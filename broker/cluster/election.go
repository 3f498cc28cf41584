package cluster

import (
	"strconv"
	"time"

	"github.com/hashicorp/raft"
)

// electIfSoleVoter makes a broker that is the only voter of its quorum
// stand for election at once. A raft follower waits a heartbeat timeout
// (randomised up to twice that: 0.5–1 s by default) for a leader to speak
// before it stands; a sole voter has nobody to wait for, and that wait was
// most of a single broker's start-up time. Voters of a larger quorum keep
// waiting: standing at once together would split their votes.
//
// hashicorp/raft has no call that starts an election, but ReloadConfig
// fires the follower's timer at once when the heartbeat timeout shrinks.
// So the timeout is raised for a moment and set back: the follower finds
// it has heard from no leader, stands, and as the only voter wins without
// a network round. The configured timeouts are in force again before the
// timer fires.
func (n *Node) electIfSoleVoter() error {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return err
	}
	if !soleVoter(f.Configuration(), raft.ServerID(strconv.Itoa(n.cfg.BrokerID))) {
		return nil
	}
	configured := n.raft.ReloadableConfig()
	raised := configured
	raised.HeartbeatTimeout += raftTimerStep
	raised.ElectionTimeout = max(raised.ElectionTimeout, raised.HeartbeatTimeout)
	if err := n.raft.ReloadConfig(raised); err != nil {
		return err
	}
	return n.raft.ReloadConfig(configured)
}

// raftTimerStep is how much electIfSoleVoter raises the heartbeat timeout
// for a moment; any amount would do.
const raftTimerStep = time.Millisecond

// soleVoter reports whether id is the only voter of c.
func soleVoter(c raft.Configuration, id raft.ServerID) bool {
	voters := 0
	self := false
	for _, s := range c.Servers {
		if s.Suffrage == raft.Voter {
			voters++
			self = self || s.ID == id
		}
	}
	return voters == 1 && self
}
