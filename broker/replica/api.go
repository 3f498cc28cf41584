package replica

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kairolog/kairolog/broker/storage"
)

// Produce appends records to a partition this broker leads, as one
// uncompressed batch stamped with the current leader epoch, and returns
// the offsets of its first and last records. It is ProduceBatch of
// Batch{Records: records}.
func (m *Manager) Produce(ctx context.Context, topic string, partition int32, records []storage.Record, acks Acks, timeout time.Duration) (base, last int64, err error) {
	res, err := m.ProduceBatch(ctx, topic, partition, Batch{Records: records}, acks, timeout)
	return res.BaseOffset, res.LastOffset, err
}

// Batch is what one produce appends to one partition: records, written as
// one batch as Options say (compressed, stamped with an idempotent
// producer), either decoded (Records) or as the Count records of a records
// section another broker passed on (Section, storage.RecordSet), or a
// batch a Kafka producer encoded, stored as it came after storage's checks
// with only its base offset and leader epoch set (storage.Log.AppendBatch;
// it is changed in place).
type Batch struct {
	Records []storage.Record
	Section []byte
	Count   int
	Options storage.BatchOptions
	Encoded []byte
}

// ProduceBatch appends a batch to a partition this broker leads, stamped
// with the current leader epoch, and says where it is. A retry of an
// idempotent producer's batch writes nothing and answers with where the
// batch is (storage.AppendResult.Duplicate); with AcksAll it still waits
// for the high watermark to cover it.
//
// With AcksAll it first refuses with ErrNotEnoughReplicas (nothing written)
// when the ISR is smaller than min.insync.replicas, then waits until the high
// watermark covers the batch: ErrTimeout after timeout (the batch is written
// and may still be committed), ErrLeaderMovedAfterAppend if the leadership
// ends meanwhile (likewise), ErrNotEnoughReplicasAfterAppend if the ISR fell
// below the minimum. Other acks return right after the local append. A
// NotLeaderError always means nothing was written.
func (m *Manager) ProduceBatch(ctx context.Context, topic string, partition int32, batch Batch, acks Acks, timeout time.Duration) (storage.AppendResult, error) {
	p, err := m.leaderUnderLease(ctx, topic, partition)
	if err != nil {
		return storage.AppendResult{}, err
	}
	res, epoch, err := p.append(batch, acks)
	if err != nil || acks != AcksAll {
		return res, err
	}
	err = p.waitReplicated(ctx, res.LastOffset, epoch, timeout)
	var nl *NotLeaderError
	if errors.As(err, &nl) {
		// Not wrapped: callers forward or retry on a NotLeaderError, which
		// would write this batch a second time.
		err = fmt.Errorf("%w (%s-%d, leader now %d in epoch %d)", ErrLeaderMovedAfterAppend, nl.Topic, nl.Partition, nl.Leader, nl.Epoch)
	}
	return res, err
}

// FetchResult is a consumer fetch's answer.
type FetchResult struct {
	// Records are below HighWatermark, in offset order.
	Records        []storage.Record
	HighWatermark  int64
	LogStartOffset int64
	LogEndOffset   int64
}

// Fetch reads records from offset for a consumer, from the leader only and
// only below the high watermark. If offset is at or above the high
// watermark it waits for the high watermark to pass it (a long poll woken by
// the commit, not by polling): up to wait when offset is the log end (no
// record there yet), and up to the longer of wait and replica.lag.time.max.ms
// while the log holds a record at offset that the followers have not all
// copied yet. Within that time a live in-sync follower has fetched it or
// the leader has shrunk the ISR without it, either of which moves the high
// watermark; so a consumer that reads right after an acks=1 produce gets
// the record instead of an empty answer, without ever seeing an
// uncommitted one. maxRecords ≤ 0 means no limit;
// at least one record is returned if one is available, whatever maxBytes
// says (storage's rule). An offset below the log start or above the log end
// offset is an *OffsetOutOfRangeError carrying the log start and the high
// watermark. An offset between the high watermark and the log end is not
// out of range (as in Kafka): a leader elected a moment ago may not have
// learnt yet how far its predecessor had committed, and a consumer that
// read up to there must wait, not be reset.
func (m *Manager) Fetch(ctx context.Context, topic string, partition int32, offset int64, maxBytes, maxRecords int, wait time.Duration) (FetchResult, error) {
	p, err := m.leaderUnderLease(ctx, topic, partition)
	if err != nil {
		return FetchResult{}, err
	}
	return p.read(ctx, offset, maxBytes, maxRecords, wait)
}

func (p *partition) read(ctx context.Context, offset int64, maxBytes, maxRecords int, wait time.Duration) (FetchResult, error) {
	p.mu.Lock()
	if p.closed || p.role != roleLeader {
		err := p.notLeaderLocked()
		p.mu.Unlock()
		return FetchResult{}, err
	}
	epoch, hw, lso, leo := p.state.LeaderEpoch, p.hw, p.log.LogStartOffset(), p.log.LogEndOffset()
	p.mu.Unlock()
	if offset < lso || offset > max(hw, leo) {
		return FetchResult{}, &OffsetOutOfRangeError{Offset: offset, LogStartOffset: lso, HighWatermark: hw, LogEndOffset: leo}
	}
	if offset >= hw && (wait > 0 || offset < leo) {
		var err error
		if hw, err = p.waitFetchable(ctx, offset, epoch, wait); err != nil {
			return FetchResult{}, err
		}
	}
	res := FetchResult{HighWatermark: hw}
	if offset < hw {
		if !p.env.leaseHeld() {
			// Stalled during the wait (lease.go): not on this metadata.
			return FetchResult{}, ErrMetadataNotCurrent
		}
		recs, err := p.log.Read(offset, hw, maxBytes, maxRecords)
		var oor *storage.OffsetOutOfRangeError
		if errors.As(err, &oor) {
			// Retention moved the log start past offset meanwhile.
			return FetchResult{}, &OffsetOutOfRangeError{Offset: offset, LogStartOffset: oor.LogStartOffset, HighWatermark: hw, LogEndOffset: oor.LogEndOffset}
		}
		if err != nil {
			return FetchResult{}, err
		}
		res.Records = recs
		var n int64
		for i := range recs {
			n += int64(len(recs[i].Key) + len(recs[i].Value))
		}
		p.stats.bytesOut.Add(n)
		p.stats.recordsOut.Add(int64(len(recs)))
	}
	res.LogStartOffset, res.LogEndOffset = p.log.LogStartOffset(), p.log.LogEndOffset()
	return res, nil
}

// PartitionInfo is one hosted replica's state, as describe and the metrics
// show it. Offsets and sizes are this replica's own; on a follower the high
// watermark is the leader's as last learnt.
type PartitionInfo struct {
	Topic          string
	Partition      int32
	IsLeader       bool
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	Replicas       []int32
	// ISR is the committed ISR as this replica knows it.
	ISR               []int32
	MinInsyncReplicas int
	HighWatermark     int64
	LogEndOffset      int64
	LogStartOffset    int64
	SizeBytes         int64
	// Offline is set once the replica's log failed (an fsync error): it
	// serves nothing until the broker restarts.
	Offline bool
}

// PartitionInfo describes a hosted partition; see Manager.partition for the
// errors.
func (m *Manager) PartitionInfo(topic string, partition int32) (PartitionInfo, error) {
	p, err := m.partition(topic, partition)
	if err != nil {
		return PartitionInfo{}, err
	}
	return p.info(), nil
}

func (p *partition) info() PartitionInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PartitionInfo{
		Topic: p.topic, Partition: p.id,
		IsLeader:          p.role == roleLeader,
		Leader:            p.state.Leader,
		LeaderEpoch:       p.state.LeaderEpoch,
		PartitionEpoch:    p.state.PartitionEpoch,
		Replicas:          append([]int32(nil), p.state.Replicas...),
		ISR:               append([]int32(nil), p.state.ISR...),
		MinInsyncReplicas: p.minISR,
		HighWatermark:     p.hw,
		LogEndOffset:      p.log.LogEndOffset(),
		LogStartOffset:    p.log.LogStartOffset(),
		SizeBytes:         p.log.Size(),
		Offline:           p.offline != nil,
	}
}
