package replica

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The leader's side of fetch sessions (protocol.go): what each follower's
// session holds, so that an incremental request need not list it again.
//
// A follower broker has at most one session with this broker: a new one
// replaces the old. The sessions are therefore bounded by the number of
// brokers, and one that is left idle (its follower died or stopped
// following anything here) is dropped after sessionIdleTimeout. Nothing
// but a request of its follower changes a session or counts as a fetch:
// a dead follower's session never keeps it in the ISR.

// sessionIdleTimeout drops a session no request has used for this long
// (Kafka's min.incremental.fetch.session.eviction.ms is 2 minutes).
const sessionIdleTimeout = 2 * time.Minute

// sessionCache holds the leader's sessions.
type sessionCache struct {
	mu        sync.Mutex
	byReplica map[int32]*leaderSession
}

// leaderSession is one follower's session on this leader.
//
// Locking: mu serialises the session's requests (a follower sends one at
// a time; a request it gave up on finishes before the next runs) and
// guards the partitions. Appenders never take it: they mark partitions
// ready under readyMu, a short lock of its own, and wake the parked
// request through wake.
//
// A request looks only at the session's unsettled partitions (Kafka
// answers an idle session from the partitions an append marked ready in
// the same way): those the request lists, those marked ready since the
// last one (an append, a high watermark or log start that moved, a role,
// leadership or ISR change), and those the last reply left with
// something still to say. Every other partition is settled: its follower
// was caught up at its last fetch offset, is in the ISR and was told the
// current high watermark and log start, and nothing has changed since
// (any change marks it ready). A request of the session is then a fetch
// of it at the same offset, still caught up, which the follower's
// progress takes from fetchedAt without looking at the partition
// (followerProgress.vouch). A new session looks at every partition once.
type leaderSession struct {
	id       uint32
	replica  int32
	lastUsed atomic.Int64 // unix nanoseconds of the last request
	closed   atomic.Bool
	// fetchedAt is when the latest request began (unix nanoseconds of
	// the manager's clock; 0 before the first): the time of its fetch of
	// every settled partition.
	fetchedAt atomic.Int64

	mu    sync.Mutex
	epoch int32 // the session epoch the next request must carry
	parts map[partitionKey]*sessionPartition
	// order is the partitions in the order replies visit them; next is
	// where the next reply starts, so that under the reply's byte bound
	// every partition gets its turn.
	order []*sessionPartition
	next  int
	// unsettled are the partitions the current or next request must look
	// at (see above).
	unsettled map[partitionKey]*sessionPartition

	// logStartsSent are the new log starts the last reply told the
	// follower: its next request of the session comes after it applied
	// them (followerProgress.logStart).
	logStartsSent []sentLogStart

	readyMu sync.Mutex
	ready   map[partitionKey]struct{}
	// nudgedEpoch: requests up to this session epoch return at once
	// (replica/fetch-session-wake).
	nudgedEpoch int32
	wake        chan struct{} // capacity 1
}

// sentLogStart is a log start offset a reply told the follower.
type sentLogStart struct {
	p        *partition
	logStart int64
}

// sessionPartition is one partition of a session, as the follower last
// stated it.
type sessionPartition struct {
	key              partitionKey
	topicID          string
	leaderEpoch      int32
	fetchOffset      int64
	lastFetchedEpoch int32
	maxBytes         int
	// p is the replica the session watches for appends (nil until this
	// broker hosts the partition).
	p *partition
	// sentHW and sentLogStart are what the follower was told last; a
	// reply names the partition again when either moved. -1: never told.
	sentHW, sentLogStart int64
	// pos is the partition's index in the session's order.
	pos int
}

func newSessionCache() *sessionCache {
	return &sessionCache{byReplica: map[int32]*leaderSession{}}
}

// open returns the session a request belongs to, locked: a new one for a
// full request (session id 0), replacing the follower's previous session,
// or the existing one whose id and epoch the request carries.
func (c *sessionCache) open(r sessionRequest) (*leaderSession, error) {
	c.mu.Lock()
	old := c.byReplica[r.ReplicaID]
	if r.SessionID == 0 {
		s := &leaderSession{
			id: newSessionID(old), replica: r.ReplicaID, epoch: 0,
			parts: map[partitionKey]*sessionPartition{}, ready: map[partitionKey]struct{}{},
			unsettled:   map[partitionKey]*sessionPartition{},
			nudgedEpoch: -1, wake: make(chan struct{}, 1),
		}
		s.lastUsed.Store(time.Now().UnixNano())
		// Locked before it is published: a full request racing this one
		// may replace and close it at once, and close lets its
		// partitions go only once this request is done with them.
		s.mu.Lock()
		c.byReplica[r.ReplicaID] = s
		c.mu.Unlock()
		if old != nil {
			old.close()
		}
		return s, nil
	}
	c.mu.Unlock()
	if old == nil || old.id != r.SessionID {
		return nil, fmt.Errorf("%w: session %d of broker %d", errSessionNotFound, r.SessionID, r.ReplicaID)
	}
	old.mu.Lock()
	switch {
	case old.closed.Load():
		old.mu.Unlock()
		return nil, fmt.Errorf("%w: session %d of broker %d was replaced", errSessionNotFound, r.SessionID, r.ReplicaID)
	case r.SessionEpoch != old.epoch:
		old.mu.Unlock()
		return nil, fmt.Errorf("%w: %d, expected %d", errInvalidSessionEpoch, r.SessionEpoch, old.epoch)
	}
	old.lastUsed.Store(time.Now().UnixNano())
	return old, nil
}

// newSessionID picks a random non-zero id, never the one it replaces.
func newSessionID(old *leaderSession) uint32 {
	for {
		id := rand.Uint32()
		if id != 0 && (old == nil || id != old.id) {
			return id
		}
	}
}

// find returns the follower's current session if it has id id.
func (c *sessionCache) find(replica int32, id uint32) *leaderSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.byReplica[replica]; s != nil && s.id == id {
		return s
	}
	return nil
}

// expire drops sessions idle for sessionIdleTimeout, and every session
// when closing is set.
func (c *sessionCache) expire(now time.Time, closing bool) {
	c.mu.Lock()
	var dropped []*leaderSession
	for id, s := range c.byReplica {
		if closing || now.Sub(time.Unix(0, s.lastUsed.Load())) > sessionIdleTimeout {
			dropped = append(dropped, s)
			delete(c.byReplica, id)
		}
	}
	c.mu.Unlock()
	for _, s := range dropped {
		s.close()
	}
}

// close ends the session: a parked request returns, later ones are
// refused, and its partitions stop waking it. The partitions are let go
// once no request holds the session.
func (s *leaderSession) close() {
	if s.closed.Swap(true) {
		return
	}
	s.signal()
	go func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, sp := range s.parts {
			s.unwatch(sp)
		}
		s.parts, s.order, s.unsettled = nil, nil, nil
	}()
}

// apply takes a request's partition changes into the session; the
// partitions it lists are unsettled. Callers hold s.mu.
func (s *leaderSession) apply(r sessionRequest) {
	s.epoch = r.SessionEpoch + 1
	changed := false
	for _, tp := range r.Forgotten {
		key := partitionKey{tp.Topic, tp.Partition}
		if sp := s.parts[key]; sp != nil {
			s.unwatch(sp)
			delete(s.parts, key)
			delete(s.unsettled, key)
			changed = true
		}
	}
	for _, q := range r.Partitions {
		key := partitionKey{q.Topic, q.Partition}
		sp := s.parts[key]
		if sp == nil {
			sp = &sessionPartition{key: key, sentHW: -1, sentLogStart: -1}
			s.parts[key] = sp
			changed = true
		}
		if sp.topicID != q.TopicID || sp.leaderEpoch != q.LeaderEpoch {
			// Another leadership or topic: tell the follower everything
			// again.
			sp.sentHW, sp.sentLogStart = -1, -1
		}
		sp.topicID, sp.leaderEpoch, sp.fetchOffset = q.TopicID, q.LeaderEpoch, q.FetchOffset
		sp.lastFetchedEpoch, sp.maxBytes = q.LastFetchedEpoch, q.MaxBytes
		if sp.maxBytes == 0 {
			sp.maxBytes = DefaultFetchMaxBytes
		}
		s.unsettled[key] = sp
	}
	if changed {
		s.order = s.order[:0]
		for _, sp := range s.parts {
			sp.pos = len(s.order)
			s.order = append(s.order, sp)
		}
		s.next = 0
	}
}

// unsettleAll makes every partition of the session unsettled (a new
// session looks at each once). Callers hold s.mu.
func (s *leaderSession) unsettleAll() {
	for key, sp := range s.parts {
		s.unsettled[key] = sp
	}
}

// takeReady moves the partitions marked ready into the unsettled ones and
// returns them, and reports whether a request of session epoch epoch was
// nudged. Callers hold s.mu.
func (s *leaderSession) takeReady(epoch int32) (ready []*sessionPartition, nudged bool) {
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	for key := range s.ready {
		if sp := s.parts[key]; sp != nil { // else forgotten since
			s.unsettled[key] = sp
			ready = append(ready, sp)
		}
	}
	clear(s.ready)
	return ready, epoch <= s.nudgedEpoch
}

// unsettledInOrder returns the unsettled partitions in reply order,
// starting at position start. Callers hold s.mu.
func (s *leaderSession) unsettledInOrder(start int) []*sessionPartition {
	out := make([]*sessionPartition, 0, len(s.unsettled))
	for _, sp := range s.unsettled {
		out = append(out, sp)
	}
	n := len(s.order)
	slices.SortFunc(out, func(a, b *sessionPartition) int {
		return (a.pos-start+n)%n - (b.pos-start+n)%n
	})
	return out
}

// watch makes appends to p wake the session for sp, replacing the
// replica sp watched before (a partition deleted and hosted again is
// another replica). Callers hold s.mu.
func (s *leaderSession) watch(sp *sessionPartition, p *partition) {
	if sp.p == p {
		return
	}
	s.unwatch(sp)
	sp.p = p
	p.mu.Lock()
	if p.sessions == nil {
		p.sessions = map[*leaderSession]struct{}{}
	}
	p.sessions[s] = struct{}{}
	p.mu.Unlock()
}

// unwatch stops appends to sp's replica waking the session; the
// session no longer stands for the follower's fetches of it. Callers
// hold s.mu.
func (s *leaderSession) unwatch(sp *sessionPartition) {
	if sp.p == nil {
		return
	}
	sp.p.mu.Lock()
	delete(sp.p.sessions, s)
	if fp := sp.p.followers[s.replica]; fp != nil && fp.vouch == s {
		fp.catchUpLocked()
		fp.vouch = nil
	}
	sp.p.mu.Unlock()
	sp.p = nil
}

// markReady records that key may have something for the follower (its
// log grew, its role changed) and wakes the parked request. Partitions
// call it under their own mu.
func (s *leaderSession) markReady(key partitionKey) {
	s.readyMu.Lock()
	s.ready[key] = struct{}{}
	s.readyMu.Unlock()
	s.signal()
}

// nudge makes requests up to session epoch epoch return at once.
func (s *leaderSession) nudge(epoch int32) {
	s.readyMu.Lock()
	s.nudgedEpoch = max(s.nudgedEpoch, epoch)
	s.readyMu.Unlock()
	s.signal()
}

func (s *leaderSession) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// fetchTime returns fetchedAt as a time; zero before the first request.
func (s *leaderSession) fetchTime() time.Time {
	if ns := s.fetchedAt.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// notifySessionsLocked marks p ready in every session fetching it from
// here and wakes them: its log grew, its high watermark or log start
// moved, its role, leadership or ISR changed. Callers hold p.mu.
func (p *partition) notifySessionsLocked() {
	if len(p.sessions) == 0 {
		return
	}
	key := partitionKey{p.topic, p.id}
	for s := range p.sessions {
		s.markReady(key)
	}
}

// notifySessions is notifySessionsLocked for a caller without p.mu.
func (p *partition) notifySessions() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notifySessionsLocked()
}
