package replica

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A leader appends and serves consumers only while this broker's metadata
// is known to be current (Metadata.Lease): the lease holds and the manager
// has acted on an image at least as new as the one the lease vouches for.
// A broker that was stopped (SIGSTOP), frozen or stalled answers the
// requests queued meanwhile as soon as it runs again, before its metadata
// catches up; without the lease it would serve them as the leader it was,
// with the records of a topic that may have been deleted and created again
// meanwhile. With it, those requests wait for the next heartbeat to
// confirm the metadata — by then the manager has deleted the stale
// replica, or learnt that another broker leads — and are answered as the
// confirmed metadata says.

// leaseWait bounds how long a request waits for the lease; it comes back
// within a heartbeat interval once the controller answers.
const leaseWait = 3 * time.Second

// leasePoll is how often a waiting request looks at the lease again. The
// wait is rare (after a stall, or while the controller is unreachable),
// and the lease has no change notification of its own.
const leasePoll = 10 * time.Millisecond

// leaseHeld reports whether the lease holds for what this manager has
// applied.
func (m *Manager) leaseHeld() bool {
	index, ok := m.cfg.Metadata.Lease()
	return ok && m.reconciledIndex.Load() >= index
}

// awaitLease waits until the lease holds, at most leaseWait, and returns
// ErrMetadataNotCurrent if it does not.
func (m *Manager) awaitLease(ctx context.Context) error {
	if m.leaseHeld() {
		return nil
	}
	deadline := time.NewTimer(leaseWait)
	defer deadline.Stop()
	tick := time.NewTicker(leasePoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("%w after waiting %v", ErrMetadataNotCurrent, leaseWait)
		case <-tick.C:
			if m.leaseHeld() {
				return nil
			}
		}
	}
}

// leaderUnderLease returns the hosted partition for a client's request.
//
// A request may name the topic id its broker resolved the topic name to
// (WithTopicID): a replica of another id is not that topic — the broker's
// image has a topic created again since, and the manager has not acted on
// it yet, or the other way round — and the request waits for the manager,
// as awaitEpoch does, then fails with ErrInconsistentTopicID.
//
// If the replica leads, the lease must hold first: after waiting for it,
// the partition is looked up again, since the confirmed metadata may have
// replaced it (a stale replica of a deleted topic) or moved its
// leadership. A replica that does not lead needs no lease: it serves
// nothing.
func (m *Manager) leaderUnderLease(ctx context.Context, topic string, partition int32) (*partition, error) {
	id := topicIDOf(ctx)
	p, err := m.partition(topic, partition)
	if err == nil && !p.sameTopic(id) {
		p, err = m.awaitEpoch(ctx, topic, id, partition, -1)
	}
	if err != nil {
		return nil, err
	}
	if leader, _ := p.leadership(); !leader || m.leaseHeld() {
		return p, nil
	}
	if err := m.awaitLease(ctx); err != nil {
		return nil, err
	}
	if p, err = m.partition(topic, partition); err == nil && !p.sameTopic(id) {
		p, err = m.awaitEpoch(ctx, topic, id, partition, -1)
	}
	return p, err
}

type topicIDKey struct{}

// WithTopicID records on a produce's or fetch's ctx the topic id the
// caller's metadata gives the topic: the replica serves the request only
// if it holds that topic (see leaderUnderLease).
func WithTopicID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, topicIDKey{}, id)
}

// topicIDOf is the id WithTopicID recorded, "" if none.
func topicIDOf(ctx context.Context) string {
	id, _ := ctx.Value(topicIDKey{}).(string)
	return id
}

// epochCatchUpWait bounds how long a request waits for this broker to
// learn the leader epoch or topic id it names.
const epochCatchUpWait = time.Second

// awaitEpoch returns the hosted partition once this broker has applied
// leader epoch epoch (or a newer one) to it, and hosts it under topic id
// topicID. Metadata reaches brokers a few milliseconds apart, and the
// broker that sent a request often learns of a topic created again under
// the same name before this one does: answering INCONSISTENT_TOPIC_ID at
// once would fail a request that succeeds a moment later. After
// epochCatchUpWait, or when ctx ends, it returns what m.partition says,
// or ErrInconsistentTopicID for a replica of another topic id, and the
// request fails.
func (m *Manager) awaitEpoch(ctx context.Context, topic, topicID string, partition, epoch int32) (*partition, error) {
	t := time.NewTimer(epochCatchUpWait)
	defer t.Stop()
	for {
		// Take the channel first, so a change applied between the check
		// and the wait still wakes it.
		m.reconciledMu.Lock()
		ch := m.reconciled.wait()
		m.reconciledMu.Unlock()
		p, err := m.partition(topic, partition)
		if err == nil && !p.sameTopic(topicID) {
			err = fmt.Errorf("%w: %s-%d is topic id %s here, %s at the requester", ErrInconsistentTopicID, topic, partition, p.TopicID(), topicID)
		}
		if err == nil && p.knowsEpoch(epoch) || errors.Is(err, ErrClosed) {
			return p, err
		}
		if ok, werr := waitFor(ctx, ch, t); werr != nil || !ok {
			return p, err
		}
	}
}
