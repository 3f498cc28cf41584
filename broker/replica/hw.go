package replica

import "time"

// followerProgress is the leader's view of one follower, learnt from its
// fetch requests.
type followerProgress struct {
	// leo is the follower's log end offset (its last fetch offset), -1 until
	// it fetches in this leadership.
	leo int64
	// lastFetch is when it last fetched, lastFetchLeaderLEO the leader's log
	// end offset at that time.
	lastFetch          time.Time
	lastFetchLeaderLEO int64
	// lastCaughtUp is the last time the follower had everything the leader
	// had (Kafka's lastCaughtUpTimeMs): the ISR shrink clock.
	lastCaughtUp time.Time
}

// updateFollowerLocked records a fetch at fetchOffset while the leader's log
// ends at leaderLEO, then moves the high watermark and the ISR as it allows.
func (p *partition) updateFollowerLocked(id int32, fp *followerProgress, fetchOffset, leaderLEO int64) {
	now := p.env.now()
	switch {
	case fetchOffset >= leaderLEO:
		fp.lastCaughtUp = now
	case !fp.lastFetch.IsZero() && fetchOffset >= fp.lastFetchLeaderLEO:
		// It has everything the leader had when it fetched last time: it
		// was caught up then, and is only behind by what came since.
		fp.lastCaughtUp = fp.lastFetch
	}
	fp.leo = fetchOffset
	fp.lastFetch = now
	fp.lastFetchLeaderLEO = leaderLEO
	p.maybeAdvanceHWLocked()
	p.maybeExpandISRLocked(id, fp)
}

// maybeAdvanceHWLocked sets the high watermark to the smallest log end offset
// in the maximal ISR (committed members plus those being added), never
// lower than it was.
func (p *partition) maybeAdvanceHWLocked() {
	if p.role != roleLeader {
		return
	}
	hw := p.log.LogEndOffset()
	for _, id := range p.maximalISRLocked() {
		if id == p.env.brokerID {
			continue
		}
		fp, ok := p.followers[id]
		if !ok {
			// An ISR member outside the replica set cannot be waited for;
			// the controller never commits one.
			continue
		}
		hw = min(hw, fp.leo)
	}
	if hw > p.hw {
		p.hw = hw
		p.hwMoved.notify()
		p.ackWaiters.release(hw)
	}
}
