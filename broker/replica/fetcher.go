package replica

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The follower's side of replication: one fetcher per leader broker (Kafka's
// replica fetcher thread), carrying in one fetch session every partition
// this broker follows on that leader. The cost of an idle follower is then
// one long poll per leader per replica.fetch.wait.max.ms, however many
// partitions it follows; a partition that fails (a truncation, an error,
// a leader that has not learnt its epoch yet) is handled on its own while
// the others go on.
//
// A partition joins the fetcher of its leader when it becomes a follower
// (becomeFollower) and leaves it when it becomes leader, follows another
// leader or epoch, goes offline or is closed: partitions move between
// sessions without restarting them. Every write a fetcher makes checks
// the partition's leadership under its role lock (partition.isFollowingLocked),
// so a fetcher acting on an answer for an ended leadership cannot touch
// the log.

// errStaleFetcher: the leadership an answer was fetched for has ended; the
// partition has already left the session, or is about to.
var errStaleFetcher = errors.New("fetcher's leadership has ended")

// fetchBackoff is the pause before a partition that failed, or a session
// that failed, is fetched again.
const fetchBackoff = 100 * time.Millisecond

// fetchers is the set of fetchers of one broker, one per leader.
//
// Locking: mu, then a fetcher's mu. Partitions call follow and unfollow
// under their own mu; a fetcher never holds its mu while it calls into a
// partition, so the order partition → fetcher is never reversed.
type fetchers struct {
	m  *Manager
	mu sync.Mutex
	// byLeader holds a fetcher per leader broker that has had partitions;
	// an empty one sends nothing.
	byLeader map[int32]*sessionFetcher
}

// sessionFetcher is the fetch loop for one leader broker.
type sessionFetcher struct {
	m      *Manager
	leader int32
	// wake tells the loop that partitions were added or are due again.
	wake chan struct{}

	mu sync.Mutex
	// parts are the partitions followed on this leader; held are those
	// the leader's session holds, as of the last request it answered. A
	// partition held but no longer followed (or delayed) is named
	// forgotten in the next request.
	parts map[partitionKey]*followed
	held  map[partitionKey]struct{}
	// The next incremental request looks only at these, never at every
	// followed partition: changed are those whose entry may differ from
	// what the session holds (added, answered since, topic id learnt),
	// delayed those left out after a failure, dropped those no longer
	// followed that the session may still hold.
	changed map[partitionKey]struct{}
	delayed map[partitionKey]struct{}
	dropped map[partitionKey]struct{}
	// sessionID and epoch are the session as the next request continues
	// it: id 0 starts a new one.
	sessionID uint32
	epoch     int32
	// seq numbers the requests; inFlight is the one on its way, if any.
	seq      uint64
	inFlight bool
	nudging  bool
	// retry fires when the earliest delayed partition is due.
	retry *time.Timer
}

// followed is one partition a fetcher carries, for one leadership.
type followed struct {
	p     *partition
	epoch int32 // the leader epoch followed
	// joined is the first request that carried this leadership (0: none
	// yet), so a reply to an earlier request is not taken for it; sent is
	// what the leader's session holds for it.
	joined uint64
	sent   sessionPartitionRequest
	// delayedUntil: failed, and left out of the session until then.
	delayedUntil time.Time
	lastErr      string
}

func newFetchers(m *Manager) *fetchers {
	return &fetchers{m: m, byLeader: map[int32]*sessionFetcher{}}
}

// follow makes p fetched from leader in epoch, moving it out of any other
// leader's session. Callers hold p.mu.
func (fs *fetchers) follow(p *partition, leader, epoch int32) {
	key := partitionKey{p.topic, p.id}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for id, f := range fs.byLeader {
		if id != leader {
			f.remove(key, p)
		}
	}
	f := fs.byLeader[leader]
	if f == nil {
		f = &sessionFetcher{m: fs.m, leader: leader, wake: make(chan struct{}, 1),
			parts: map[partitionKey]*followed{}, held: map[partitionKey]struct{}{},
			changed: map[partitionKey]struct{}{}, delayed: map[partitionKey]struct{}{}, dropped: map[partitionKey]struct{}{}}
		if !fs.m.goBackground(func() { f.run(fs.m.ctx) }) {
			return // closing
		}
		fs.byLeader[leader] = f
	}
	f.add(key, &followed{p: p, epoch: epoch})
}

// unfollow stops fetching p from anyone. Callers hold p.mu.
func (fs *fetchers) unfollow(p *partition) {
	key := partitionKey{p.topic, p.id}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, f := range fs.byLeader {
		f.remove(key, p)
	}
}

// refetch has p's entry sent again by the fetcher that carries it.
// Callers may hold p.mu.
func (fs *fetchers) refetch(p *partition) {
	key := partitionKey{p.topic, p.id}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, f := range fs.byLeader {
		f.mu.Lock()
		if fe := f.parts[key]; fe != nil && fe.p == p {
			f.changed[key] = struct{}{}
		}
		f.mu.Unlock()
	}
}

// add puts fe in the session in place of whatever the partition had, and
// gets it fetched soon: a request parked on the leader is nudged to end.
func (f *sessionFetcher) add(key partitionKey, fe *followed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.parts[key] = fe
	f.changed[key] = struct{}{}
	delete(f.delayed, key)
	delete(f.dropped, key)
	f.signalLocked()
}

// remove drops the partition if it is p's (a replica hosted again since
// is another partition object and stays).
func (f *sessionFetcher) remove(key partitionKey, p *partition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fe := f.parts[key]; fe != nil && fe.p == p {
		delete(f.parts, key)
		delete(f.changed, key)
		delete(f.delayed, key)
		f.dropped[key] = struct{}{}
	}
}

// signalLocked wakes the loop, and nudges the leader to end a parked
// request so that the next one, which carries the change, goes out now.
func (f *sessionFetcher) signalLocked() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
	if f.inFlight && f.sessionID != 0 && !f.nudging {
		req := sessionWakeRequest{ReplicaID: f.m.cfg.BrokerID, SessionID: f.sessionID, SessionEpoch: f.epoch}
		f.nudging = f.m.goBackground(func() { f.nudge(req) })
	}
}

// nudge sends replica/fetch-session-wake. A failure costs only latency:
// the parked request ends by itself within the wait.
func (f *sessionFetcher) nudge(req sessionWakeRequest) {
	defer func() {
		f.mu.Lock()
		f.nudging = false
		f.mu.Unlock()
	}()
	addr, ok := f.m.cfg.Metadata.BrokerAddress(f.leader)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(f.m.ctx, 5*time.Second)
	defer cancel()
	_ = f.m.client.wakeSession(ctx, addr, req)
}
