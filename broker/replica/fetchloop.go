package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// run is the fetch loop of one leader: send the session's next request,
// apply the reply partition by partition, and again, until the manager
// closes. Without anything to fetch it sends nothing.
func (f *sessionFetcher) run(ctx context.Context) {
	log := f.m.logger.With("leader", f.leader)
	var lastErr string
	for ctx.Err() == nil {
		req, seq, ok := f.nextRequest()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-f.wake:
			}
			continue
		}
		reply, err := f.send(ctx, req)
		if err == nil {
			err = f.applyReply(req, reply, seq)
			reply.applied()
		} else {
			f.mu.Lock()
			f.inFlight = false
			f.mu.Unlock()
		}
		if err == nil {
			lastErr = ""
			continue
		}
		if ctx.Err() != nil {
			return
		}
		// Start a new session with a full request; after a refusal of
		// the session itself (the leader restarted, say) at once.
		f.resetSession()
		if errors.Is(err, errSessionNotFound) || errors.Is(err, errInvalidSessionEpoch) {
			log.Debug("Starting a new fetch session", "reason", err)
			continue
		}
		if s := err.Error(); s != lastErr {
			log.Warn("Fetch session failed", "error", err)
			lastErr = s
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(fetchBackoff):
		}
	}
}

// send runs one request against the leader.
func (f *sessionFetcher) send(ctx context.Context, req sessionRequest) (sessionReply, error) {
	addr, ok := f.m.cfg.Metadata.BrokerAddress(f.leader)
	if !ok {
		return sessionReply{}, fmt.Errorf("address of broker %d unknown", f.leader)
	}
	return f.m.client.fetchSession(ctx, addr, req)
}

// nextRequest builds the session's next request: every partition for a
// full request, otherwise those added, changed or due again after a
// failure, and the ones to forget. An incremental request looks only at
// the partitions something happened to since the last one. It reports
// false when there is nothing to send.
func (f *sessionFetcher) nextRequest() (sessionRequest, uint64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	full := f.sessionID == 0
	f.seq++
	req := sessionRequest{
		ReplicaID: f.m.cfg.BrokerID, SessionID: f.sessionID, SessionEpoch: f.epoch,
		WaitMs: f.m.cfg.FetchWait.Milliseconds(), MaxBytes: f.m.cfg.FetchResponseMaxBytes,
	}
	// Delayed partitions that are due rejoin; the others leave the
	// session until they are.
	var nextDue time.Time
	for key := range f.delayed {
		fe := f.parts[key]
		if !now.Before(fe.delayedUntil) {
			delete(f.delayed, key)
			f.changed[key] = struct{}{}
			continue
		}
		if nextDue.IsZero() || fe.delayedUntil.Before(nextDue) {
			nextDue = fe.delayedUntil
		}
		f.forgetLocked(&req, key)
	}
	for key := range f.dropped {
		f.forgetLocked(&req, key)
	}
	clear(f.dropped)
	if full {
		clear(f.changed)
		for key := range f.parts {
			if _, delayed := f.delayed[key]; !delayed {
				f.changed[key] = struct{}{}
			}
		}
	}
	for key := range f.changed {
		fe := f.parts[key]
		if _, delayed := f.delayed[key]; fe == nil || delayed {
			continue
		}
		f.m.entriesBuilt.Add(1)
		q := fe.state(f.m.cfg.FetchMaxBytes)
		if _, held := f.held[key]; full || !held || fe.joined == 0 || q != fe.sent {
			req.Partitions = append(req.Partitions, q)
			fe.sent = q
			if fe.joined == 0 {
				fe.joined = f.seq
			}
			f.held[key] = struct{}{}
		}
	}
	clear(f.changed)
	if !nextDue.IsZero() {
		f.scheduleRetryLocked(time.Until(nextDue))
	}
	fetchable := len(f.parts) - len(f.delayed)
	switch {
	case fetchable == 0 && (full || len(req.Forgotten) == 0):
		return req, 0, false
	case fetchable == 0:
		req.WaitMs = 0 // only to let go of partitions
	}
	f.inFlight = true
	return req, f.seq, true
}

// forgetLocked names key forgotten in req if the session holds it.
func (f *sessionFetcher) forgetLocked(req *sessionRequest, key partitionKey) {
	if _, held := f.held[key]; held {
		req.Forgotten = append(req.Forgotten, topicPartition{Topic: key.topic, Partition: key.partition})
		delete(f.held, key)
	}
}

// state is the partition's entry in a request: the follower's log end
// offset and latest epoch now.
func (fe *followed) state(maxBytes int) sessionPartitionRequest {
	return sessionPartitionRequest{
		Topic: fe.p.topic, TopicID: fe.p.TopicID(), Partition: fe.p.id, LeaderEpoch: fe.epoch,
		FetchOffset: fe.p.log.LogEndOffset(), LastFetchedEpoch: fe.p.log.LatestEpoch(), MaxBytes: maxBytes,
	}
}

// scheduleRetryLocked wakes the loop after d, when a delayed partition is
// due. It does not nudge a parked request: a partition that failed rejoins
// with the next request.
func (f *sessionFetcher) scheduleRetryLocked(d time.Duration) {
	if f.retry == nil {
		f.retry = time.AfterFunc(d, func() {
			select {
			case f.wake <- struct{}{}:
			default:
			}
		})
		return
	}
	f.retry.Reset(d)
}

// resetSession makes the next request a full one of a new session.
func (f *sessionFetcher) resetSession() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessionID, f.epoch = 0, 0
	clear(f.held)
}

// applyReply takes the leader's answer to request seq. A reply that does
// not add up is an error of the whole session.
func (f *sessionFetcher) applyReply(req sessionRequest, reply sessionReply, seq uint64) error {
	f.mu.Lock()
	f.inFlight = false
	switch {
	case reply.SessionID == 0, req.SessionID != 0 && reply.SessionID != req.SessionID:
		f.mu.Unlock()
		return fmt.Errorf("leader answered session %d for session %d", reply.SessionID, req.SessionID)
	case req.SessionID == 0:
		f.sessionID, f.epoch = reply.SessionID, 1
	default:
		f.epoch++
	}
	f.mu.Unlock()

	off := 0
	for _, e := range reply.Partitions {
		if e.Bytes < 0 || e.Bytes > len(reply.Batches)-off {
			return fmt.Errorf("leader reply: %s-%d claims %d bytes, %d left", e.Topic, e.Partition, e.Bytes, len(reply.Batches)-off)
		}
		batches := reply.Batches[off : off+e.Bytes]
		off += e.Bytes
		key := partitionKey{e.Topic, e.Partition}
		f.mu.Lock()
		fe := f.parts[key]
		current := fe != nil && fe.joined != 0 && fe.joined <= seq
		f.mu.Unlock()
		if !current {
			continue // no longer followed here, or since another leadership
		}
		f.mu.Lock()
		if f.parts[key] == fe {
			f.changed[key] = struct{}{} // its log end or epoch may move now
		}
		f.mu.Unlock()
		if err := f.applyPartition(fe, e, batches); err != nil {
			f.failed(key, fe, err)
		} else {
			fe.lastErr = ""
		}
	}
	return nil
}

// applyPartition applies one partition's answer: append the batches and
// take the leader's high watermark and log start; truncate where the
// logs diverged; restart the log at the leader's log start if it is
// behind it, or cut it to the leader's log end if it is past it.
func (f *sessionFetcher) applyPartition(fe *followed, e sessionPartitionReply, batches []byte) error {
	p := fe.p
	switch {
	case e.Error != nil:
		offset := fe.sent.FetchOffset
		err := decodeError(e.Topic, e.Partition, offset, api.FromBody(api.StatusForCode(e.Error.Code), *e.Error))
		var oor *OffsetOutOfRangeError
		if !errors.As(err, &oor) {
			return err
		}
		switch {
		case offset < oor.LogStartOffset:
			return p.restartAt(f.leader, fe.epoch, oor.LogStartOffset)
		case offset > oor.LogEndOffset:
			return p.truncateTo(f.leader, fe.epoch, oor.LogEndOffset)
		}
		return nil
	case e.Diverging != nil:
		return f.truncateDiverged(fe, *e.Diverging)
	}
	return p.appendAsFollower(f.leader, fe.epoch, batches, e.HighWatermark, e.LogStartOffset)
}

// truncateDiverged cuts the log where it agrees with the leader's, given
// where the leader's log ends the latest epoch both know (Kafka's
// OffsetsForLeaderEpoch answer, here carried by the fetch): whatever this
// replica wrote beyond it, as a deposed leader, never reached the leader
// and is discarded.
func (f *sessionFetcher) truncateDiverged(fe *followed, d epochEndOffset) error {
	p := fe.p
	latest := p.log.LatestEpoch()
	var target int64
	switch {
	case d.Epoch < 0:
		// The leader knows no epoch up to ours (its log starts later):
		// keep only what was committed.
		target = p.HighWatermark()
	case d.Epoch < latest:
		// The leader never saw our latest epoch; our logs agree up to the
		// end of the last epoch both have.
		_, own := p.log.EndOffsetForEpoch(d.Epoch)
		target = min(d.EndOffset, own)
	default:
		target = d.EndOffset
	}
	return p.truncateTo(f.leader, fe.epoch, target)
}

// failed leaves a partition out of the session for fetchBackoff (the
// others go on), logging each distinct failure once. A leadership that
// has ended is not a failure: the partition is about to move.
func (f *sessionFetcher) failed(key partitionKey, fe *followed, err error) {
	if errors.Is(err, errStaleFetcher) {
		return
	}
	if s := err.Error(); s != fe.lastErr {
		// A leader that has moved on (this broker's metadata is a moment
		// behind) is expected around every election: the next image
		// moves the partition.
		level := slog.LevelWarn
		var nl *NotLeaderError
		if errors.As(err, &nl) || errors.Is(err, ErrFencedLeaderEpoch) || errors.Is(err, ErrUnknownLeaderEpoch) ||
			errors.Is(err, ErrInconsistentTopicID) {
			level = slog.LevelInfo
		}
		f.m.logger.Log(context.Background(), level, "Fetching partition failed", "topic", key.topic, "partition", key.partition,
			"leader", f.leader, "epoch", fe.epoch, "error", err)
		fe.lastErr = s
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.parts[key] == fe {
		fe.delayedUntil = time.Now().Add(fetchBackoff)
		f.delayed[key] = struct{}{}
		delete(f.changed, key)
	}
}
