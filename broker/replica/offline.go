package replica

import (
	"errors"

	"github.com/kairolog/kairolog/broker/storage"
)

// A partition goes offline when its log fails (storage.ErrLogFailed: an
// fsync of its files failed). As PostgreSQL does since "fsyncgate", the
// failure is not retried: what was written since the last successful fsync
// may never reach the disk even if a later fsync succeeds. The replica
// stops leading and following and answers every request with the log's
// failure (STORAGE_ERROR, retriable: another replica may serve it). It
// stays offline until the broker restarts; storage.Open then checks the
// log again from its last synced offset, and the replica catches up from
// the leader like any other. As a follower it leaves the ISR after
// replica.lag.time.max.ms; as a leader it keeps its leadership (the
// metadata has no way yet to take a replica out of service), so the
// partition is unavailable until the broker restarts.

// checkLog takes the partition offline if err is its log's failure, and
// returns err.
func (p *partition) checkLog(err error) error {
	if errors.Is(err, storage.ErrLogFailed) {
		p.goOffline(err)
	}
	return err
}

// goOffline takes the replica out of service for good. It does not take
// roleMu, so any goroutine may call it, a writer holding roleMu included:
// a write that already passed its role check is refused by the failed log.
func (p *partition) goOffline(cause error) {
	p.mu.Lock()
	if p.offline != nil || p.closed {
		p.mu.Unlock()
		return
	}
	p.offline = cause
	wasLeader, epoch := p.role == roleLeader, p.state.LeaderEpoch
	p.role = roleNone
	p.env.unfollow(p)
	p.pending = nil
	p.followers = nil
	p.hwMoved.notify()
	p.ackWaiters.releaseAll()
	p.notifySessionsLocked()
	p.mu.Unlock()
	p.env.logger.Error("Partition offline: an fsync of its log failed, so records it acknowledged may not be on disk; "+
		"it serves nothing until the broker restarts and recovers the log from its last synced offset",
		"topic", p.topic, "partition", p.id, "was_leader", wasLeader, "epoch", epoch, "error", cause)
	p.env.wentOffline(p, wasLeader, epoch)
}

// partitionOffline is partitionEnv.wentOffline: a coordinator loaded on a
// partition this broker led drops it.
func (m *Manager) partitionOffline(p *partition, wasLeader bool, epoch int32) {
	if wasLeader && m.cfg.OnLeadershipChange != nil {
		m.cfg.OnLeadershipChange(p.topic, p.id, false, epoch)
	}
}
