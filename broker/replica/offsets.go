package replica

import (
	"context"
	"errors"
	"time"

	"github.com/kairolog/kairolog/broker/storage"
)

// OffsetForTimestamp answers Kafka's ListOffsets by timestamp on the
// partition's leader: the first offset whose record has a timestamp ≥ ts,
// found through the log's time index, or the high watermark when no record
// a consumer may read has one. Offsets at or above the high watermark are
// never returned, since consumers cannot fetch them yet.
func (m *Manager) OffsetForTimestamp(topic string, partition int32, ts int64) (int64, error) {
	p, err := m.partition(topic, partition)
	if err != nil {
		return 0, err
	}
	p.mu.Lock()
	if p.closed || p.role != roleLeader {
		err := p.notLeaderLocked()
		p.mu.Unlock()
		return 0, err
	}
	hw := p.hw
	p.mu.Unlock()
	if !m.leaseHeld() {
		return 0, ErrMetadataNotCurrent
	}
	off, err := p.log.OffsetForTimestamp(ts)
	if err != nil {
		return 0, err
	}
	return min(off, hw), nil
}

// DeleteRecords moves the log start offset of a partition this broker leads
// up to offset (Kafka's DeleteRecords): records below it can no longer be
// read and the segments that hold nothing at or above it are deleted. The
// followers do the same when their next fetch brings the leader's log
// start. An offset above the high watermark is an *OffsetOutOfRangeError:
// only what every in-sync replica has may be deleted, so a leader change
// cannot bring deleted records back. An offset at or below the log start
// changes nothing. It returns the log start offset afterwards.
func (m *Manager) DeleteRecords(topic string, partition int32, offset int64) (int64, error) {
	p, err := m.partition(topic, partition)
	if err != nil {
		return 0, err
	}
	// The read lock keeps this leadership in place while the log moves.
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	p.mu.Lock()
	if p.closed || p.role != roleLeader {
		err := p.notLeaderLocked()
		p.mu.Unlock()
		return 0, err
	}
	hw := p.hw
	p.mu.Unlock()
	lso := p.log.LogStartOffset()
	if offset > hw || offset < 0 {
		return lso, &OffsetOutOfRangeError{Offset: offset, LogStartOffset: lso, HighWatermark: hw, LogEndOffset: p.log.LogEndOffset()}
	}
	if err := p.checkLog(p.log.DeleteRecordsBefore(offset)); err != nil {
		var oor *storage.OffsetOutOfRangeError
		if errors.As(err, &oor) {
			return lso, &OffsetOutOfRangeError{Offset: offset, LogStartOffset: oor.LogStartOffset, HighWatermark: hw, LogEndOffset: oor.LogEndOffset}
		}
		return lso, err
	}
	p.notifySessions() // the followers learn the new log start
	return p.log.LogStartOffset(), nil
}

// DeleteRecordsInSync is DeleteRecords for a client (Kafka's
// DeleteRecords): it answers once every in-sync replica has moved its log
// start too (waitLogStartApplied), so that a leader elected afterwards
// cannot serve the deleted records again. The log start it returns is the
// leader's; ErrTimeout when the replicas did not follow within timeout.
func (m *Manager) DeleteRecordsInSync(ctx context.Context, topic string, partition int32, offset int64, timeout time.Duration) (int64, error) {
	start, err := m.DeleteRecords(topic, partition, offset)
	if err != nil {
		return start, err
	}
	p, err := m.partition(topic, partition)
	if err != nil {
		return start, err
	}
	return start, p.waitLogStartApplied(ctx, offset, timeout)
}
