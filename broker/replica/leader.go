package replica

import (
	"errors"

	"github.com/kairolog/kairolog/broker/storage"
)

// Acks is how much replication a produce waits for.
type Acks int

const (
	// AcksLeader (acks=1) returns once the leader has appended the batch.
	AcksLeader Acks = 1
	// AcksAll (acks=all, -1) returns once the high watermark covers the
	// batch, that is once every ISR member has it.
	AcksAll Acks = -1
	// AcksNone (acks=0) is treated as AcksLeader: the HTTP API always answers.
	AcksNone Acks = 0
)

// becomeLeader makes this replica the leader for st.LeaderEpoch: the
// follower fetcher stops, appends from now on carry the new epoch, and the
// follower progress starts afresh (every follower must fetch again before it
// counts towards the high watermark).
func (p *partition) becomeLeader(st PartitionState) {
	p.roleMu.Lock()
	// The epoch starts at the log end offset now, before anything is
	// written in it (Kafka's assign on election): a follower asking where
	// its latest epoch ends gets this offset even while this leader has
	// written nothing. No append runs while roleMu is held.
	if err := p.log.AssignEpoch(st.LeaderEpoch); errors.Is(err, storage.ErrLogFailed) {
		p.roleMu.Unlock()
		p.goOffline(err)
		return
	} else if err != nil && !errors.Is(err, storage.ErrClosed) {
		p.env.logger.Error("Cannot record the start of the leader epoch", "topic", p.topic, "partition", p.id,
			"epoch", st.LeaderEpoch, "error", err)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.roleMu.Unlock()
		return
	}
	p.env.unfollow(p)
	p.role = roleLeader
	p.state = clonePartitionState(st)
	p.minISR = st.minInsyncReplicas()
	p.pending = nil
	p.epochStartOffset = p.log.LogEndOffset()
	now := p.env.now()
	p.followers = make(map[int32]*followerProgress, len(st.Replicas))
	for _, r := range st.Replicas {
		if r != p.env.brokerID {
			// Give every ISR member a full lag period to show up before it
			// can be shrunk away.
			p.followers[r] = &followerProgress{leo: -1, lastCaughtUp: now}
		}
	}
	p.maybeAdvanceHWLocked()
	p.hwMoved.notify()
	p.ackWaiters.releaseAll()
	p.notifySessionsLocked()
	p.mu.Unlock()
	p.roleMu.Unlock()
	p.env.logger.Info("Became leader", "topic", p.topic, "partition", p.id,
		"epoch", st.LeaderEpoch, "isr", st.ISR, "log_end_offset", p.epochStartOffset)
}

// append writes one batch as leader and returns where it is and the
// leader epoch it was stamped with. Concurrent appends share a write
// (groupcommit.go).
func (p *partition) append(batch Batch, acks Acks) (res storage.AppendResult, epoch int32, err error) {
	p.mu.Lock()
	if p.closed || p.role != roleLeader {
		err := p.notLeaderLocked()
		p.mu.Unlock()
		return res, 0, err
	}
	epoch = p.state.LeaderEpoch
	if acks == AcksAll && len(p.state.ISR) < p.minISR {
		p.mu.Unlock()
		return res, epoch, ErrNotEnoughReplicas
	}
	p.mu.Unlock()
	return p.appendGrouped(batch)
}

// checkLeaderEpochLocked validates a follower's view of the leadership.
func (p *partition) checkLeaderEpochLocked(epoch int32) error {
	switch {
	case p.closed || p.role != roleLeader:
		return p.notLeaderLocked()
	case epoch < p.state.LeaderEpoch:
		return ErrFencedLeaderEpoch
	case epoch > p.state.LeaderEpoch:
		return ErrUnknownLeaderEpoch
	}
	return nil
}

// endOffsetForEpoch is what a follower's fetch in leaderEpoch compares its
// log with (Kafka's OffsetsForLeaderEpoch): the largest epoch not above
// requested that this leader's log knows, and where it ends (the start of
// the next epoch, or the log end offset for the latest). The log learnt
// this leadership's epoch at election (becomeLeader), so an epoch that
// ended before it is answered with the offset where this one began even
// before this leader has written anything.
func (p *partition) endOffsetForEpoch(leaderEpoch, requested int32) (epoch int32, end int64, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkLeaderEpochLocked(leaderEpoch); err != nil {
		return -1, -1, err
	}
	epoch, end = p.endOffsetForEpochLocked(requested)
	return epoch, end, nil
}

// endOffsetForEpochLocked is endOffsetForEpoch for a caller that has
// checked the leadership under p.mu and still holds it: the role cannot
// change meanwhile.
func (p *partition) endOffsetForEpochLocked(requested int32) (epoch int32, end int64) {
	return p.log.EndOffsetForEpoch(requested)
}
