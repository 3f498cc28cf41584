package replica

import (
	"context"
	"errors"
	"time"

	"github.com/kairolog/kairolog/broker/storage"
)

// BatchesResult is a consumer's read of stored batches.
type BatchesResult struct {
	// Batches are whole stored batches, from the one holding the offset
	// read, that end below HighWatermark.
	Batches        []byte
	HighWatermark  int64
	LogStartOffset int64
	LogEndOffset   int64
	// LeaderEpoch is the leader's epoch when it answered.
	LeaderEpoch int32
}

// FetchBatches reads stored batches for a consumer that decodes them
// itself (a Kafka consumer), from the leader only: whole batches from the
// one holding offset (so the first records may precede it), ending below
// the high watermark, at most maxBytes of them but always the first.
// When the high watermark is not past offset it waits for it up to wait,
// no longer (a Kafka fetch's max wait). currentEpoch, when ≥ 0, is the
// leader epoch the consumer knows: an older one is ErrFencedLeaderEpoch, a
// newer one ErrUnknownLeaderEpoch. An offset below the log start or above
// the log end is an *OffsetOutOfRangeError.
func (m *Manager) FetchBatches(ctx context.Context, topic string, partition int32, offset int64, maxBytes int, wait time.Duration, currentEpoch int32) (BatchesResult, error) {
	p, err := m.leaderUnderLease(ctx, topic, partition)
	if err != nil {
		return BatchesResult{}, err
	}
	p.mu.Lock()
	if p.closed || p.role != roleLeader {
		err := p.notLeaderLocked()
		p.mu.Unlock()
		return BatchesResult{}, err
	}
	epoch, hw, lso, leo := p.state.LeaderEpoch, p.hw, p.log.LogStartOffset(), p.log.LogEndOffset()
	p.mu.Unlock()
	if err := checkCurrentEpoch(currentEpoch, epoch); err != nil {
		return BatchesResult{}, err
	}
	if offset < lso || offset > max(hw, leo) {
		return BatchesResult{}, &OffsetOutOfRangeError{Offset: offset, LogStartOffset: lso, HighWatermark: hw, LogEndOffset: leo}
	}
	if offset >= hw && wait > 0 {
		hw, err = p.waitHighWatermark(ctx, offset, epoch, wait)
		if err != nil {
			return BatchesResult{}, err
		}
	}
	res := BatchesResult{HighWatermark: hw, LeaderEpoch: epoch}
	if offset < hw {
		if !p.env.leaseHeld() {
			return BatchesResult{}, ErrMetadataNotCurrent
		}
		b, err := p.log.ReadRaw(offset, hw, maxBytes)
		var oor *storage.OffsetOutOfRangeError
		if errors.As(err, &oor) {
			// Retention moved the log start past offset meanwhile.
			return BatchesResult{}, &OffsetOutOfRangeError{Offset: offset, LogStartOffset: oor.LogStartOffset, HighWatermark: hw, LogEndOffset: oor.LogEndOffset}
		}
		if err != nil {
			return BatchesResult{}, p.checkLog(err)
		}
		res.Batches = b
		p.stats.bytesOut.Add(int64(len(b)))
	}
	res.LogStartOffset, res.LogEndOffset = p.log.LogStartOffset(), p.log.LogEndOffset()
	return res, nil
}

// checkCurrentEpoch compares the leader epoch a client knows (< 0: none)
// with the leader's own, as Kafka's leader does for fetches and offset
// lookups (KIP-320).
func checkCurrentEpoch(known, epoch int32) error {
	switch {
	case known < 0 || known == epoch:
		return nil
	case known < epoch:
		return ErrFencedLeaderEpoch
	default:
		return ErrUnknownLeaderEpoch
	}
}

// EpochEndOffset answers Kafka's OffsetForLeaderEpoch for a consumer on
// the partition's leader: the largest epoch at or below epoch that the log
// knows, and the offset where it ended (see storage's EndOffsetForEpoch).
func (m *Manager) EpochEndOffset(ctx context.Context, topic string, partition int32, epoch, currentEpoch int32) (foundEpoch int32, endOffset int64, err error) {
	p, err := m.leaderUnderLease(ctx, topic, partition)
	if err != nil {
		return -1, -1, err
	}
	p.mu.Lock()
	if p.closed || p.role != roleLeader {
		err := p.notLeaderLocked()
		p.mu.Unlock()
		return -1, -1, err
	}
	leaderEpoch := p.state.LeaderEpoch
	p.mu.Unlock()
	if err := checkCurrentEpoch(currentEpoch, leaderEpoch); err != nil {
		return -1, -1, err
	}
	foundEpoch, endOffset = p.log.EndOffsetForEpoch(epoch)
	return foundEpoch, endOffset, nil
}

// AwaitData waits, on a partition this broker leads, up to wait for the
// high watermark to pass offset (new data a consumer may read), and
// returns the partition's offsets then, without reading anything.
func (m *Manager) AwaitData(ctx context.Context, topic string, partition int32, offset int64, wait time.Duration, currentEpoch int32) (Offsets, error) {
	p, err := m.leaderUnderLease(ctx, topic, partition)
	if err != nil {
		return Offsets{}, err
	}
	leader, epoch := p.leadership()
	if !leader {
		p.mu.Lock()
		defer p.mu.Unlock()
		return Offsets{}, p.notLeaderLocked()
	}
	if err := checkCurrentEpoch(currentEpoch, epoch); err != nil {
		return Offsets{}, err
	}
	hw, err := p.waitHighWatermark(ctx, offset, epoch, wait)
	if err != nil {
		return Offsets{}, err
	}
	return Offsets{LogStartOffset: p.log.LogStartOffset(), HighWatermark: hw, LeaderEpoch: epoch}, nil
}

// Offsets are a partition's log start offset, high watermark and leader
// epoch, as its leader knows them.
type Offsets struct {
	LogStartOffset, HighWatermark int64
	LeaderEpoch                   int32
	// EpochStartOffset is the log end offset at which this leader's
	// epoch began: until the high watermark reaches it, the high
	// watermark may be below records the previous leader acknowledged.
	EpochStartOffset int64
}

// LeaderOffsets returns the offsets of a partition this broker leads,
// checking the leader epoch the client knows as FetchBatches does.
func (m *Manager) LeaderOffsets(ctx context.Context, topic string, partition int32, currentEpoch int32) (Offsets, error) {
	p, err := m.leaderUnderLease(ctx, topic, partition)
	if err != nil {
		return Offsets{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.role != roleLeader {
		return Offsets{}, p.notLeaderLocked()
	}
	if err := checkCurrentEpoch(currentEpoch, p.state.LeaderEpoch); err != nil {
		return Offsets{}, err
	}
	return Offsets{LogStartOffset: p.log.LogStartOffset(), HighWatermark: p.hw, LeaderEpoch: p.state.LeaderEpoch,
		EpochStartOffset: p.epochStartOffset}, nil
}

// waitHighWatermark waits up to wait for the high watermark to pass offset
// while this replica leads in epoch, and returns the high watermark it saw
// last. Unlike waitFetchable it never waits longer than asked: a Kafka
// consumer's max wait is the whole wait. A leadership that ends or moves
// to another epoch is a NotLeaderError.
func (p *partition) waitHighWatermark(ctx context.Context, offset int64, epoch int32, wait time.Duration) (int64, error) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		p.mu.Lock()
		hw := p.hw
		if hw > offset {
			p.mu.Unlock()
			return hw, nil
		}
		if p.closed || p.role != roleLeader || p.state.LeaderEpoch != epoch {
			err := p.notLeaderLocked()
			p.mu.Unlock()
			return hw, err
		}
		ch := p.hwMoved.wait()
		p.mu.Unlock()
		woken, err := waitFor(ctx, ch, t)
		if err != nil || !woken {
			return hw, err
		}
	}
}
