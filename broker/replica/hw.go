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
	// logStart is the log start offset the follower has applied, as far
	// as the leader knows: the highest one a reply told it before its
	// next request (DeleteRecords waits for it).
	logStart int64
	// vouch is the follower's fetch session in which this partition is
	// settled (sessions.go): its last fetch found it caught up, and every
	// later request of the session, which does not look at the partition,
	// fetches it again at the same offset while nothing was appended.
	// Those fetches count from the session's fetchedAt (catchUpLocked).
	vouch *leaderSession
}

// catchUpLocked records the fetches the vouching session made since the
// follower's progress last looked at it: each was at the log end, so the
// latest is both its last fetch and the last time it was caught up.
// Callers hold the partition's mu.
func (fp *followerProgress) catchUpLocked() {
	if fp.vouch == nil {
		return
	}
	t := fp.vouch.fetchTime()
	if t.After(fp.lastFetch) {
		fp.lastFetch = t
	}
	if t.After(fp.lastCaughtUp) {
		fp.lastCaughtUp = t
	}
}

// updateFollowerLocked records a fetch at fetchOffset while the leader's log
// ends at leaderLEO, then moves the high watermark and the ISR as it allows.
func (p *partition) updateFollowerLocked(id int32, fp *followerProgress, fetchOffset, leaderLEO int64) {
	fp.catchUpLocked()
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
		p.env.hwChanged()
		p.hwMoved.notify()
		p.ackWaiters.release(hw)
		p.notifySessionsLocked() // the followers learn the new HW
	}
}
