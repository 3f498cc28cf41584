package replica

import (
	"fmt"
)

// becomeFollower makes this replica follow st.Leader in st.LeaderEpoch (or
// just sit, fetching nothing, while the partition has no leader). Waiters
// on the old leadership are woken and fail with NotLeader; the partition
// joins the fetch session of its leader, whose first answer says where
// its log diverges from the leader's, if it does.
func (p *partition) becomeFollower(st PartitionState) {
	p.roleMu.Lock()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.roleMu.Unlock()
		return
	}
	wasLeader := p.role == roleLeader
	p.role = roleFollower
	if st.Leader == NoLeader {
		p.role = roleNone
	}
	p.state = clonePartitionState(st)
	p.minISR = st.minInsyncReplicas()
	p.pending = nil
	p.followers = nil
	p.hwMoved.notify()
	p.ackWaiters.releaseAll()
	p.notifySessionsLocked()
	if p.role == roleFollower {
		p.env.follow(p, st.Leader, st.LeaderEpoch)
	} else {
		p.env.unfollow(p)
	}
	p.mu.Unlock()
	p.roleMu.Unlock()
	p.env.logger.Info("Became follower", "topic", p.topic, "partition", p.id,
		"leader", st.Leader, "epoch", st.LeaderEpoch, "was_leader", wasLeader)
}

// isFollowingLocked reports whether the replica still follows leader in
// epoch; a fetcher checks it (under roleMu) before every write so that an
// answer for an ended leadership never touches the log.
func (p *partition) isFollowingLocked(leader, epoch int32) bool {
	return !p.closed && p.role == roleFollower && p.state.Leader == leader && p.state.LeaderEpoch == epoch
}

// appendAsFollower appends raw batches fetched from leader in epoch, takes
// the leader's high watermark (capped at what this replica has) and moves
// the log start up to the leader's, so records the leader has deleted
// (retention) disappear here too.
func (p *partition) appendAsFollower(leader, epoch int32, batches []byte, leaderHW, leaderLogStart int64) error {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	p.mu.Lock()
	ok := p.isFollowingLocked(leader, epoch)
	p.mu.Unlock()
	if !ok {
		return errStaleFetcher
	}
	if len(batches) > 0 {
		if _, err := p.log.AppendRaw(batches); err != nil {
			return p.checkLog(err)
		}
	}
	if start := min(leaderLogStart, p.log.LogEndOffset()); start > p.log.LogStartOffset() {
		if err := p.log.DeleteRecordsBefore(start); err != nil {
			return p.checkLog(err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if hw := min(leaderHW, p.log.LogEndOffset()); hw > p.hw {
		p.hw = hw
		p.env.hwChanged()
		p.hwMoved.notify()
	}
	return nil
}

// truncateTo cuts the follower's log back to offset. At or past the log end
// it removes no record but still drops a leader epoch that starts at the
// log end and wrote nothing (see storage's Truncate), which would otherwise
// refuse the leader's older-epoch batches forever. The high watermark is
// capped at the new end: only a deposed leader's unreplicated tail is ever
// cut, and that was above every HW.
func (p *partition) truncateTo(leader, epoch int32, offset int64) error {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	p.mu.Lock()
	ok := p.isFollowingLocked(leader, epoch)
	p.mu.Unlock()
	if !ok {
		return errStaleFetcher
	}
	leo := p.log.LogEndOffset()
	if err := p.checkLog(p.log.Truncate(offset)); err != nil {
		return fmt.Errorf("truncate %s-%d to %d: %w", p.topic, p.id, offset, err)
	}
	if offset >= leo {
		return nil
	}
	p.env.logger.Info("Truncated follower log", "topic", p.topic, "partition", p.id,
		"from", leo, "to", offset, "leader", leader, "epoch", epoch)
	p.mu.Lock()
	p.hw = min(p.hw, offset)
	p.mu.Unlock()
	p.env.hwChanged()
	return nil
}

// restartAt empties the follower's log and restarts it at the leader's log
// start offset, for a follower whose whole log is below it.
func (p *partition) restartAt(leader, epoch int32, offset int64) error {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	p.mu.Lock()
	ok := p.isFollowingLocked(leader, epoch)
	p.mu.Unlock()
	if !ok {
		return errStaleFetcher
	}
	if err := p.checkLog(p.log.TruncateFullyAndStartAt(offset)); err != nil {
		return fmt.Errorf("restart %s-%d at %d: %w", p.topic, p.id, offset, err)
	}
	p.env.logger.Info("Restarted follower log at leader's log start", "topic", p.topic,
		"partition", p.id, "offset", offset, "leader", leader, "epoch", epoch)
	p.mu.Lock()
	p.hw = offset
	p.mu.Unlock()
	p.env.hwChanged()
	return nil
}
