package replica

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/storage"
)

// ServePeer registers the replica operations (protocol.go) on a broker's
// peer listener.
func (m *Manager) ServePeer(mux *peer.Mux) {
	peer.Handle(mux, opFetchSession, m.serveFetchSession)
	peer.Handle(mux, opSessionWake, m.serveSessionWake)
}

// serveFetchSession answers a follower's session request (the purgatory of
// Kafka's delayed fetch, for one session):
//
//  1. Take the request's changes into the session and record a fetch of
//     every partition of the session at its fetch offset: the high
//     watermark and the ISR move as they would for one request per
//     partition. Only the unsettled partitions are looked at (sessions.go);
//     the settled ones are fetched at the log end again, which their
//     followers' progress takes from the session's fetchedAt.
//  2. If no partition has anything for the follower yet (batches, an
//     error, a divergence), park until an append or a role change marks
//     one ready, the follower nudges the session, or the wait ends.
//  3. Answer with the partitions that have something new.
func (m *Manager) serveFetchSession(ctx context.Context, r sessionRequest) (sessionReply, error) {
	if err := validSessionRequest(r); err != nil {
		return sessionReply{}, encodeError(err)
	}
	s, err := m.sessions.open(r)
	if err != nil {
		return sessionReply{}, encodeError(err)
	}
	defer s.mu.Unlock()
	// The fetch time is taken before the ready partitions: a partition
	// appended to after it is looked at below or marked ready for the
	// next request. (An append whose records landed just before it but
	// which marks the partition ready only after the ready partitions are
	// taken counts the follower caught up at this time: off by the few
	// microseconds between the append's write and its mark.)
	now := m.cfg.Now()
	if r.SessionID != 0 {
		// The follower applies a reply before it sends its next request.
		for _, sl := range s.logStartsSent {
			sl.p.followerHasLogStart(s.replica, sl.logStart)
		}
	}
	s.logStartsSent = s.logStartsSent[:0]
	s.apply(r)
	full := r.SessionID == 0
	epoch := r.SessionEpoch
	if full {
		s.unsettleAll()
	}
	s.takeReady(epoch)

	// Step 1: every partition, listed or not, is fetched at its offset.
	// The metadata notification is taken first, so that a change applied
	// after a partition was found pending still ends the wait.
	reconciled := m.nextReconcile()
	urgent, pending := false, false
	for _, sp := range s.unsettled {
		st := m.examine(s, sp, true)
		urgent = urgent || st.urgent()
		pending = pending || st.pendingErr != nil
	}
	s.fetchedAt.Store(now.UnixNano())

	// Step 2: the long poll.
	wait := min(time.Duration(r.WaitMs)*time.Millisecond, maxFetchWait)
	deadline := time.Now().Add(wait)
	if !urgent && wait > 0 {
		urgent = m.park(ctx, s, epoch, deadline, reconciled, pending)
	}
	// A session replaced meanwhile (the follower started another) still
	// answers this request as it stands; the follower reads the new
	// session's replies, and its next request of this one is refused.
	expired := !urgent && !time.Now().Before(deadline)

	// Step 3.
	return m.buildReply(s, full, expired, r.MaxBytes), nil
}

// nextReconcile returns a channel closed once the manager has applied the
// next metadata change.
func (m *Manager) nextReconcile() <-chan struct{} {
	m.reconciledMu.Lock()
	defer m.reconciledMu.Unlock()
	return m.reconciled.wait()
}

// validSessionRequest refuses what no follower sends.
func validSessionRequest(r sessionRequest) error {
	if r.WaitMs < 0 || r.MaxBytes < 0 || r.SessionEpoch < 0 || (r.SessionID == 0) != (r.SessionEpoch == 0) {
		return fmt.Errorf("%w: wait_ms %d, max_bytes %d, session %d epoch %d", errInvalidArgument,
			r.WaitMs, r.MaxBytes, r.SessionID, r.SessionEpoch)
	}
	for _, q := range r.Partitions {
		if q.FetchOffset < 0 || q.MaxBytes < 0 {
			return fmt.Errorf("%w: %s-%d: fetch_offset %d, max_bytes %d", errInvalidArgument,
				q.Topic, q.Partition, q.FetchOffset, q.MaxBytes)
		}
	}
	return nil
}

// park waits for step 2 of serveFetchSession and reports whether it ended
// because a partition has something for the follower (or the follower
// nudged the session, or the session was replaced) rather than at the
// deadline. With pending partitions (an epoch, a topic id or a partition
// this broker has not applied yet) every metadata change is a reason to
// look again.
func (m *Manager) park(ctx context.Context, s *leaderSession, epoch int32, deadline time.Time, reconciled <-chan struct{}, pending bool) bool {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for {
		var metadataChanged <-chan struct{}
		if pending {
			metadataChanged = reconciled
		}
		select {
		case <-ctx.Done():
			return true // the follower is gone; what it gets does not matter
		case <-t.C:
			return false
		case <-metadataChanged:
			reconciled = m.nextReconcile()
			// A partition that was pending may be answerable now: record
			// the follower's fetch of it, as step 1 could not. (For the
			// others that is the same fetch again, at an offset that is
			// still the follower's log end.)
			pending = false
			for _, sp := range s.unsettled {
				st := m.examine(s, sp, true)
				if st.urgent() {
					return true
				}
				pending = pending || st.pendingErr != nil
			}
		case <-s.wake:
			if s.closed.Load() {
				return true
			}
			ready, nudged := s.takeReady(epoch)
			if nudged {
				return true
			}
			for _, sp := range ready {
				if m.examine(s, sp, false).urgent() || sp.logStartMoved() {
					return true
				}
			}
		}
	}
}

// buildReply answers with every partition for a full request, and
// otherwise those with batches, an error, a divergence or a moved high
// watermark or log start, all of them among the unsettled partitions. A
// partition still pending when the wait expired is answered with its
// error. A partition left with nothing more to say is settled.
func (m *Manager) buildReply(s *leaderSession, full, expired bool, maxBytes int) sessionReply {
	out := sessionReply{SessionID: s.id, reads: &readBuffers{}}
	budget := maxBytes
	if budget <= 0 {
		budget = DefaultFetchResponseMaxBytes
	}
	n := len(s.order)
	start := 0
	if n > 0 {
		start = s.next % n
	}
	nextSet := false
	for _, sp := range s.unsettledInOrder(start) {
		st := m.examine(s, sp, false)
		e := sessionPartitionReply{Topic: sp.key.topic, Partition: sp.key.partition}
		switch {
		case st.pendingErr != nil:
			if !expired {
				continue
			}
			e.Error = ptr(encodeError(st.pendingErr).Body())
		case st.err != nil:
			e.Error = ptr(encodeError(st.err).Body())
		case st.diverging != nil:
			e.Diverging = st.diverging
		default:
			if st.hasData && budget > 0 {
				batches, err := m.readForFollower(st.p, sp, min(sp.maxBytes, budget), out.reads)
				if err != nil {
					e.Error = ptr(encodeError(err).Body())
					break
				}
				out.Batches = out.reads.join(out.Batches, batches)
				e.Bytes = len(batches)
				budget -= len(batches)
				if !nextSet && budget <= 0 {
					// The next reply starts after the last partition this
					// one had room for.
					s.next, nextSet = (sp.pos+1)%n, true
				}
			}
			e.HighWatermark, e.LogStartOffset, e.LogEndOffset = st.p.offsets()
			if st.settles() {
				delete(s.unsettled, sp.key)
			}
			if e.Bytes == 0 && !full && e.HighWatermark == sp.sentHW && e.LogStartOffset == sp.sentLogStart {
				continue // nothing new
			}
			if e.LogStartOffset != sp.sentLogStart {
				s.logStartsSent = append(s.logStartsSent, sentLogStart{st.p, e.LogStartOffset})
			}
			sp.sentHW, sp.sentLogStart = e.HighWatermark, e.LogStartOffset
		}
		out.Partitions = append(out.Partitions, e)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// readForFollower reads batches from sp's fetch offset. Retention may have
// moved the log start past it since examine looked.
func (m *Manager) readForFollower(p *partition, sp *sessionPartition, maxBytes int, reads *readBuffers) ([]byte, error) {
	batches, err := p.log.ReadRawWith(sp.fetchOffset, -1, maxBytes, reads.alloc)
	var oor *storage.OffsetOutOfRangeError
	if errors.As(err, &oor) {
		return nil, &OffsetOutOfRangeError{Offset: sp.fetchOffset, LogStartOffset: oor.LogStartOffset, HighWatermark: p.HighWatermark(), LogEndOffset: oor.LogEndOffset}
	}
	if err != nil {
		return nil, p.checkLog(err)
	}
	p.stats.replicaBytesOut.Add(int64(len(batches)))
	return batches, nil
}

// sessionPartitionState is what examine found for one partition.
type sessionPartitionState struct {
	p *partition
	// pendingErr: not answerable yet, and the error to answer once the
	// wait expires (this broker has not applied the epoch, topic id or
	// partition the follower names).
	pendingErr error
	err        error
	diverging  *epochEndOffset
	hasData    bool
	// inISR: the follower is in the committed ISR; vouched: this session
	// stands for its fetches (followerProgress.vouch).
	inISR, vouched bool
}

// settles reports whether a partition answered with its high watermark
// and log start and no batches may leave the unsettled ones: the follower
// has everything and is in the ISR, so until something marks the
// partition ready its requests are the same fetch at the log end, which
// the session stands for. (A follower outside the ISR is looked at on
// every request, each of which may add it back.)
func (st sessionPartitionState) settles() bool {
	return st.pendingErr == nil && st.err == nil && st.diverging == nil && !st.hasData && st.inISR && st.vouched
}

// urgent reports whether the follower should get the answer now.
func (st sessionPartitionState) urgent() bool {
	return st.err != nil || st.diverging != nil || st.hasData
}

// examine looks at one partition of s for the follower; with record set,
// it records the follower's fetch at the session's fetch offset (its log
// end offset), which may move the high watermark and the ISR, and makes
// the session stand for the follower's later fetches of it while it is
// caught up (followerProgress.vouch).
func (m *Manager) examine(s *leaderSession, sp *sessionPartition, record bool) sessionPartitionState {
	m.examinations.Add(1)
	p, err := m.partition(sp.key.topic, sp.key.partition)
	if err != nil {
		var nl *NotLeaderError
		switch {
		case errors.Is(err, ErrClosed):
			return sessionPartitionState{err: err}
		case errors.As(err, &nl) && nl.Epoch >= sp.leaderEpoch && nl.Leader != m.cfg.BrokerID:
			return sessionPartitionState{err: err}
		}
		// Not hosted here yet (or hosted in a moment, this broker
		// leading): the follower learnt of the partition or of this
		// leadership first.
		return sessionPartitionState{pendingErr: err}
	}
	s.watch(sp, p)
	if !p.sameTopic(sp.topicID) {
		return sessionPartitionState{pendingErr: fmt.Errorf("%w: %s-%d is topic id %s here, %s at the requester",
			ErrInconsistentTopicID, sp.key.topic, sp.key.partition, p.TopicID(), sp.topicID)}
	}
	st := sessionPartitionState{p: p}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkLeaderEpochLocked(sp.leaderEpoch); err != nil {
		if p.state.LeaderEpoch < sp.leaderEpoch && p.offline == nil {
			st.pendingErr = err // this broker has not applied that epoch yet
		} else {
			st.err = err
		}
		return st
	}
	fp, ok := p.followers[s.replica]
	if !ok {
		st.err = fmt.Errorf("%w: broker %d, %s-%d", ErrNotReplica, s.replica, sp.key.topic, sp.key.partition)
		return st
	}
	if sp.lastFetchedEpoch >= 0 {
		e, end := p.endOffsetForEpochLocked(sp.lastFetchedEpoch)
		if e < sp.lastFetchedEpoch || end < sp.fetchOffset {
			st.diverging = &epochEndOffset{Epoch: e, EndOffset: end}
			return st
		}
	}
	lso, leo := p.log.LogStartOffset(), p.log.LogEndOffset()
	if sp.fetchOffset < lso || sp.fetchOffset > leo {
		st.err = &OffsetOutOfRangeError{Offset: sp.fetchOffset, LogStartOffset: lso, HighWatermark: p.hw, LogEndOffset: leo}
		return st
	}
	if record {
		p.updateFollowerLocked(s.replica, fp, sp.fetchOffset, leo)
		// A replaced session's late request leaves the vouch to the
		// follower's current session.
		if !s.closed.Load() {
			fp.vouch = nil
			if sp.fetchOffset >= leo {
				fp.vouch = s
			}
		}
	}
	st.hasData = sp.fetchOffset < leo
	st.inISR = slices.Contains(p.state.ISR, s.replica)
	st.vouched = fp.vouch == s
	return st
}

// logStartMoved reports whether the log start moved since the follower was
// last told it: a DeleteRecords waits for the follower to apply it
// (waitLogStartApplied), so it is answered now rather than at the end of
// the wait. Callers hold the session's mu.
func (sp *sessionPartition) logStartMoved() bool {
	return sp.p != nil && sp.sentLogStart >= 0 && sp.p.log.LogStartOffset() != sp.sentLogStart
}

// offsets returns the high watermark, log start and log end offsets.
func (p *partition) offsets() (hw, logStart, logEnd int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hw, p.log.LogStartOffset(), p.log.LogEndOffset()
}

// serveSessionWake ends the parked request of the follower's session, if
// it is the one named.
func (m *Manager) serveSessionWake(_ context.Context, r sessionWakeRequest) (sessionWakeReply, error) {
	s := m.sessions.find(r.ReplicaID, r.SessionID)
	if s == nil {
		return sessionWakeReply{}, encodeError(fmt.Errorf("%w: session %d of broker %d", errSessionNotFound, r.SessionID, r.ReplicaID))
	}
	s.nudge(r.SessionEpoch)
	return sessionWakeReply{}, nil
}
