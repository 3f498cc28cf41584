package storage

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Producer stamps a batch with an idempotent producer: its id and epoch
// (from the cluster, see POST /producers) and the sequence number of the
// batch's first record. Sequences count the producer's records in one
// partition from 0 and wrap from MaxInt32 to 0.
type Producer struct {
	ID           int64
	Epoch        int16
	BaseSequence int32
}

// retainedBatches is how many of a producer's latest batches a partition
// remembers (Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN): a retry
// of any of them is answered with its offsets; Kafka producers keep at
// most five requests in flight per partition with idempotence.
const retainedBatches = 5

// DefaultMaxProducers bounds the producers one partition remembers (see
// producerState.evict).
const DefaultMaxProducers = 100_000

// DefaultProducerIDExpiration is Kafka's producer.id.expiration.ms.
const DefaultProducerIDExpiration = 24 * time.Hour

// producerBatch is what a partition remembers of one batch of a producer.
type producerBatch struct {
	FirstSeq, LastSeq       int32
	FirstOffset, LastOffset int64
}

// producerEntry is the state of one producer in one partition: its epoch
// and its latest batches, oldest first, all of that epoch.
type producerEntry struct {
	Epoch int16
	// LastSeen is when the producer last appended, in Unix ms: the
	// broker's clock for appends it saw, a batch's maxTimestamp for
	// state rebuilt from the log. Idle time counts from it.
	LastSeen int64
	Batches  []producerBatch
}

// lastSeq is the sequence of the producer's last record, -1 if none.
func (e *producerEntry) lastSeq() int32 {
	if len(e.Batches) == 0 {
		return NoSequence
	}
	return e.Batches[len(e.Batches)-1].LastSeq
}

// producerState is a partition's idempotent producers (Kafka's
// ProducerStateManager, without transactions): built from the batches
// appended, leader's and follower's alike, so that a new leader
// deduplicates as the old one did. The Log's writer owns it (writeMu).
type producerState struct {
	producers map[int64]*producerEntry
	// lastExpiry is when expired producers were last removed.
	lastExpiry time.Time
}

func newProducerState() *producerState {
	return &producerState{producers: map[int64]*producerEntry{}}
}

// lastSequence is the sequence of the batch's last record: base +
// lastOffsetDelta, wrapping past MaxInt32 to 0 as Kafka's does.
func lastSequence(base, delta int32) int32 {
	if base > math.MaxInt32-delta {
		return delta - (math.MaxInt32 - base) - 1
	}
	return base + delta
}

// inSequence reports whether next follows last.
func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}

// check decides what to do with a producer's batch of records [first,
// last] of its sequence: a batch the partition already holds is answered
// with where it is (dup); otherwise it must carry the producer's current
// epoch or a newer one, and continue its sequence — a newer epoch starts
// again at 0. A producer the partition does not know (new, expired, or
// whose batches retention deleted) may start anywhere, as in Kafka.
func (ps *producerState) check(p Producer, count int32) (dup producerBatch, isDup bool, err error) {
	if p.ID < 0 || p.Epoch < 0 || p.BaseSequence < 0 || count < 1 {
		return dup, false, fmt.Errorf("%w: producer %d, epoch %d, sequence %d", ErrInvalidProducer, p.ID, p.Epoch, p.BaseSequence)
	}
	e := ps.producers[p.ID]
	if e == nil {
		return dup, false, nil
	}
	switch {
	case p.Epoch < e.Epoch:
		return dup, false, fmt.Errorf("%w: producer %d has epoch %d, the partition has seen %d", ErrInvalidProducerEpoch, p.ID, p.Epoch, e.Epoch)
	case p.Epoch > e.Epoch:
		if p.BaseSequence != 0 {
			return dup, false, fmt.Errorf("%w: producer %d starts epoch %d at sequence %d, not 0", ErrOutOfOrderSequence, p.ID, p.Epoch, p.BaseSequence)
		}
		return dup, false, nil
	}
	last := lastSequence(p.BaseSequence, count-1)
	for _, b := range e.Batches {
		if b.FirstSeq == p.BaseSequence && b.LastSeq == last {
			return b, true, nil
		}
	}
	if n := e.lastSeq(); n != NoSequence && !inSequence(n, p.BaseSequence) {
		return dup, false, fmt.Errorf("%w: producer %d sent sequence %d, the partition expects %d", ErrOutOfOrderSequence, p.ID, p.BaseSequence, lastSequence(n, 1))
	}
	return dup, false, nil
}

// update records an appended batch of a producer. seen is the time to
// count idleness from.
func (ps *producerState) update(h BatchHeader, seen int64) {
	e := ps.producers[h.ProducerID]
	if e == nil {
		e = &producerEntry{Epoch: h.ProducerEpoch}
		ps.producers[h.ProducerID] = e
	}
	if e.Epoch != h.ProducerEpoch {
		e.Epoch, e.Batches = h.ProducerEpoch, e.Batches[:0]
	}
	if len(e.Batches) == retainedBatches {
		e.Batches = append(e.Batches[:0], e.Batches[1:]...)
	}
	e.Batches = append(e.Batches, producerBatch{
		FirstSeq: h.BaseSequence, LastSeq: lastSequence(h.BaseSequence, h.LastOffsetDelta),
		FirstOffset: h.BaseOffset, LastOffset: h.LastOffset(),
	})
	e.LastSeen = max(e.LastSeen, seen)
}

// expire forgets producers idle for at least expiration (Kafka's
// producer.id.expiration.ms).
func (ps *producerState) expire(now time.Time, expiration time.Duration) {
	ps.lastExpiry = now
	cutoff := now.Add(-expiration).UnixMilli()
	for id, e := range ps.producers {
		if e.LastSeen <= cutoff {
			delete(ps.producers, id)
		}
	}
}

// evict keeps the number of producers at most limit: past it, the tenth
// of them idle longest are forgotten in one pass, as if they had expired,
// so that a flood of producer ids costs bounded memory and the sort runs
// once per limit/10 new producers.
func (ps *producerState) evict(limit int) {
	if limit <= 0 || len(ps.producers) <= limit {
		return
	}
	type idle struct {
		id   int64
		seen int64
	}
	all := make([]idle, 0, len(ps.producers))
	for id, e := range ps.producers {
		all = append(all, idle{id, e.LastSeen})
	}
	slices.SortFunc(all, func(a, b idle) int { return cmp.Or(cmp.Compare(a.seen, b.seen), cmp.Compare(a.id, b.id)) })
	drop := len(all) - limit + limit/10
	for _, p := range all[:min(drop, len(all))] {
		delete(ps.producers, p.id)
	}
}

// ProducerInfo describes one producer a partition remembers.
type ProducerInfo struct {
	ID       int64
	Epoch    int16
	LastSeq  int32 // sequence of its last record
	LastSeen time.Time
	// LastOffset is the offset of its last record.
	LastOffset int64
}

func (ps *producerState) list() []ProducerInfo {
	out := make([]ProducerInfo, 0, len(ps.producers))
	for id, e := range ps.producers {
		pi := ProducerInfo{ID: id, Epoch: e.Epoch, LastSeq: e.lastSeq(), LastSeen: time.UnixMilli(e.LastSeen), LastOffset: -1}
		if n := len(e.Batches); n > 0 {
			pi.LastOffset = e.Batches[n-1].LastOffset
		}
		out = append(out, pi)
	}
	slices.SortFunc(out, func(a, b ProducerInfo) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
