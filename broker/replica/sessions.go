package replica

import (
	"fmt"
	"math/rand/v2"
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
type leaderSession struct {
	id       uint32
	replica  int32
	lastUsed atomic.Int64 // unix nanoseconds of the last request
	closed   atomic.Bool

	mu    sync.Mutex
	epoch int32 // the session epoch the next request must carry
	parts map[partitionKey]*sessionPartition
	// order is the partitions in the order replies visit them; next is
	// where the next reply starts, so that under the reply's byte bound
	// every partition gets its turn.
	order []*sessionPartition
	next  int

	readyMu sync.Mutex
	ready   map[partitionKey]struct{}
	// nudgedEpoch: requests up to this session epoch return at once
	// (replica/fetch-session-wake).
	nudgedEpoch int32
	wake        chan struct{} // capacity 1
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
			nudgedEpoch: -1, wake: make(chan struct{}, 1),
		}
		s.lastUsed.Store(time.Now().UnixNano())
		c.byReplica[r.ReplicaID] = s
		c.mu.Unlock()
		if old != nil {
			old.close()
		}
		s.mu.Lock()
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
		s.parts, s.order = nil, nil
	}()
}

// apply takes a request's partition changes into the session. Callers
// hold s.mu.
func (s *leaderSession) apply(r sessionRequest) {
	s.epoch = r.SessionEpoch + 1
	changed := false
	for _, tp := range r.Forgotten {
		key := partitionKey{tp.Topic, tp.Partition}
		if sp := s.parts[key]; sp != nil {
			s.unwatch(sp)
			delete(s.parts, key)
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
	}
	if changed {
		s.order = s.order[:0]
		for _, sp := range s.parts {
			s.order = append(s.order, sp)
		}
		s.next = 0
	}
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

func (s *leaderSession) unwatch(sp *sessionPartition) {
	if sp.p == nil {
		return
	}
	sp.p.mu.Lock()
	delete(sp.p.sessions, s)
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

// takeReady returns and clears the partitions marked ready, and reports
// whether a request of session epoch epoch was nudged.
func (s *leaderSession) takeReady(epoch int32) (ready []partitionKey, nudged bool) {
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	for k := range s.ready {
		ready = append(ready, k)
	}
	clear(s.ready)
	return ready, epoch <= s.nudgedEpoch
}

// notifySessionsLocked wakes every session fetching p from here: its log
// grew, or its role changed. Callers hold p.mu.
func (p *partition) notifySessionsLocked() {
	if len(p.sessions) == 0 {
		return
	}
	key := partitionKey{p.topic, p.id}
	for s := range p.sessions {
		s.markReady(key)
	}
}
