package replica

import (
	"context"
	"slices"
	"time"
)

// followerHasLogStart records that follower id has applied logStart: a
// reply told it, and it has sent its next request since.
func (p *partition) followerHasLogStart(id int32, logStart int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if fp := p.followers[id]; fp != nil && logStart > fp.logStart {
		fp.logStart = logStart
		p.logStartsApplied.notify()
	}
}

// logStartRecheck bounds how long waitLogStartApplied goes without
// looking again: an ISR that shrank, a follower's progress replaced by a
// new leadership, wake nothing.
const logStartRecheck = 100 * time.Millisecond

// waitLogStartApplied waits until every other member of the ISR has
// applied a log start at or past offset (Kafka's DeleteRecords waits for
// the low watermark the same way), so that no leader elected afterwards
// still holds the records below it. A new leadership knows nothing of its
// followers' log starts, but tells each its log start again with its
// first answer in that leadership (sessions.go), and learns it is applied
// from the next request. It fails when this replica stops leading, or
// with ErrTimeout.
func (p *partition) waitLogStartApplied(ctx context.Context, offset int64, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		if p.closed || p.role != roleLeader {
			err := p.notLeaderLocked()
			p.mu.Unlock()
			return err
		}
		behind := slices.ContainsFunc(p.state.ISR, func(id int32) bool {
			fp := p.followers[id]
			return id != p.env.brokerID && fp != nil && fp.logStart < offset
		})
		applied := p.logStartsApplied.wait()
		p.mu.Unlock()
		if !behind {
			return nil
		}
		select {
		case <-applied:
		case <-time.After(logStartRecheck):
		case <-deadline.C:
			return ErrTimeout
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
