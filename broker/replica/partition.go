package replica

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairolog/kairolog/broker/storage"
)

// role is what this broker does for one partition.
type role int

const (
	// roleNone: hosted on disk but no assignment seen yet (just reopened
	// after a restart), or the partition has no leader.
	roleNone role = iota
	roleLeader
	roleFollower
)

func (r role) String() string {
	switch r {
	case roleLeader:
		return "leader"
	case roleFollower:
		return "follower"
	}
	return "none"
}

// partition is one local replica: its log and, depending on its role, the
// leader's view of the followers or the follower's fetcher.
//
// Locking: roleMu orders writes to the log against role changes. Produce and
// the follower's appends and truncations hold it for reading (storage
// serialises appends itself); becoming leader or follower holds it for
// writing, so no batch is stamped with an epoch that has already ended and no
// truncation runs under a leader's append. mu guards the replication state
// below it and is held only briefly, never across network I/O; the order is
// roleMu, then mu, then the log's own lock.
type partition struct {
	topic string
	id    int32
	log   *storage.Log
	env   *partitionEnv
	// topicID is the id in the directory's partition.metadata ("" for a
	// directory written before topic ids, until the metadata names it).
	// A partition object serves one topic id for its whole life: a
	// different id means another topic, hence another partition object.
	topicID atomic.Pointer[string]

	roleMu sync.RWMutex
	// appends queues concurrent produces for group commit.
	appends appendQueue

	mu     sync.Mutex
	role   role
	closed bool
	// state is the last partition state applied from the metadata (or from
	// a committed AlterISR), including the committed ISR.
	state  PartitionState
	minISR int
	// hw is the high watermark: every offset below it is on every ISR
	// member. It never moves back while this broker hosts the replica.
	hw int64
	// leader only: where this leadership's epoch starts, each follower's
	// progress and the ISR change in flight.
	epochStartOffset int64
	followers        map[int32]*followerProgress
	pending          *isrProposal
	nextProposal     time.Time
	// sessions are the followers' fetch sessions that carry this
	// partition (leader only, sessions.go): an append or a role change
	// wakes them.
	sessions map[*leaderSession]struct{}
	// offline is the log failure that took the replica out of service
	// for good (offline.go); nil while it serves.
	offline error
	// hwMoved wakes consumers' long polls; ackWaiters are the acks=all
	// produces, woken by the high watermark moves that cover them.
	hwMoved broadcast
	// logStartsApplied wakes DeleteRecords when a follower has applied a
	// new log start.
	logStartsApplied broadcast
	ackWaiters       ackWaiters

	stats partitionCounters
}

// partitionEnv is what a partition needs from its manager.
type partitionEnv struct {
	brokerID int32
	lagMax   time.Duration
	now      func() time.Time
	logger   *slog.Logger
	// proposeISR sends an AlterISR to the controller, asynchronously.
	proposeISR func(p *partition, prop *isrProposal)
	// follow has p fetched from leader in epoch (fetcher.go), moving it
	// out of any other fetch session; unfollow stops fetching it. Both
	// are called under p.mu.
	follow   func(p *partition, leader, epoch int32)
	unfollow func(p *partition)
	// refetch has p's entry in its fetch session sent again (its topic
	// id changed).
	refetch func(p *partition)
	// wentOffline is told that p went offline (offline.go).
	wentOffline func(p *partition, wasLeader bool, epoch int32)
	// leaseHeld reports whether the metadata is known to be current
	// (lease.go).
	leaseHeld func() bool
	// hwChanges counts high watermark moves, for the checkpoint
	// (Manager.hwChanges); nil counts nothing.
	hwChanges *atomic.Uint64
}

// hwChanged tells the checkpoint that a high watermark changed. Callers
// call it after the change, so a checkpoint that read the counter before
// it either sees the new value or runs again.
func (e *partitionEnv) hwChanged() {
	if e.hwChanges != nil {
		e.hwChanges.Add(1)
	}
}

// partitionCounters are monotonically increasing, read by Stats.
type partitionCounters struct {
	bytesIn, recordsIn   atomic.Int64
	bytesOut, recordsOut atomic.Int64
	replicaBytesOut      atomic.Int64
	isrShrinks           atomic.Int64
	isrExpands           atomic.Int64
}

func newPartition(topic, topicID string, id int32, log *storage.Log, env *partitionEnv) *partition {
	p := &partition{
		topic: topic, id: id, log: log, env: env,
		state:  PartitionState{Topic: topic, TopicID: topicID, Partition: id, Leader: NoLeader, LeaderEpoch: -1, PartitionEpoch: -1},
		minISR: 1,
		hw:     log.LogStartOffset(),
	}
	p.topicID.Store(&topicID)
	return p
}

// TopicID returns the id of the topic this replica belongs to.
func (p *partition) TopicID() string { return *p.topicID.Load() }

// adoptTopicID records id in a directory written before topic ids, whose
// topic the metadata names now.
func (p *partition) adoptTopicID(id string) error {
	if err := storage.WriteTopicID(p.log.Dir(), id); err != nil {
		return err
	}
	p.topicID.Store(&id)
	p.notifySessions() // a leader compares it with its followers'
	p.env.refetch(p)   // a follower sends it to its leader
	p.env.logger.Info("Recorded the topic id of a replica written without one", "topic", p.topic, "partition", p.id, "topic_id", id)
	return nil
}

// sameTopic reports whether a request naming topic id id is about this
// replica's topic; "" on either side cannot tell and passes.
func (p *partition) sameTopic(id string) bool {
	own := p.TopicID()
	return id == "" || own == "" || id == own
}

// applyState moves the replica to the role the metadata gives it. It is
// called by the manager's single metadata goroutine, so calls never overlap.
func (p *partition) applyState(st PartitionState) {
	self := p.env.brokerID
	p.mu.Lock()
	cur := p.state
	curRole := p.role
	offline := p.offline != nil
	p.mu.Unlock()
	if offline {
		return // for good: see offline.go
	}
	if st.LeaderEpoch < cur.LeaderEpoch {
		return // an image older than one already applied
	}

	switch {
	case st.Leader == self:
		if curRole != roleLeader || st.LeaderEpoch > cur.LeaderEpoch {
			p.becomeLeader(st)
			return
		}
	case st.Leader == NoLeader:
		if curRole != roleNone || st.LeaderEpoch > cur.LeaderEpoch {
			p.becomeFollower(st) // no fetcher without a leader
			return
		}
	default:
		if curRole != roleFollower || st.LeaderEpoch > cur.LeaderEpoch || st.Leader != cur.Leader {
			p.becomeFollower(st)
			return
		}
	}
	p.updateState(st)
}

// updateState takes a newer ISR or config within the same leadership.
func (p *partition) updateState(st PartitionState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st.LeaderEpoch < p.state.LeaderEpoch {
		return
	}
	if st.PartitionEpoch > p.state.PartitionEpoch {
		// A newer partition epoch supersedes whatever we proposed: the
		// controller either committed it (and this is it) or rejected it.
		p.pending = nil
		p.state.Replicas = slices.Clone(st.Replicas)
		if p.role == roleLeader {
			// A reassignment added replicas: track them from now on.
			for _, r := range st.Replicas {
				if _, ok := p.followers[r]; !ok && r != p.env.brokerID {
					p.followers[r] = &followerProgress{leo: -1, lastCaughtUp: p.env.now()}
				}
			}
		}
		p.setISRLocked(st.ISR, st.PartitionEpoch)
	}
	p.state.Config = st.Config
	p.minISR = st.minInsyncReplicas()
}

func clonePartitionState(st PartitionState) PartitionState {
	st.Replicas = slices.Clone(st.Replicas)
	st.ISR = slices.Clone(st.ISR)
	return st
}

// close stops fetching and wakes every waiter; the log is closed by the
// manager afterwards.
func (p *partition) close() {
	p.roleMu.Lock()
	p.mu.Lock()
	p.closed = true
	p.role = roleNone
	p.env.unfollow(p)
	p.hwMoved.notify()
	p.ackWaiters.releaseAll()
	p.notifySessionsLocked()
	p.mu.Unlock()
	p.roleMu.Unlock()
}

// notLeaderLocked builds the error for a request that needs the leader:
// the log's failure for an offline replica.
func (p *partition) notLeaderLocked() error {
	if p.offline != nil {
		return p.offline
	}
	return &NotLeaderError{Topic: p.topic, Partition: p.id, Leader: p.state.Leader, Epoch: p.state.LeaderEpoch}
}

// leadership reports whether this replica leads and in which epoch.
func (p *partition) leadership() (leader bool, epoch int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.role == roleLeader, p.state.LeaderEpoch
}

// knowsEpoch reports whether the replica has applied leader epoch epoch or
// a newer one.
func (p *partition) knowsEpoch(epoch int32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state.LeaderEpoch >= epoch
}

// HighWatermark returns the replica's high watermark.
func (p *partition) HighWatermark() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hw
}

// waitFetchable is a consumer fetch's wait for the high watermark to pass
// offset (see Manager.Fetch): up to wait while offset is the log end, and
// up to the longer of wait and the replica lag time from the start of the
// request while the log holds a record at offset, however long the wait
// asked for. A record appended during the wait extends it. It returns the
// high watermark it saw last; a leadership that ends or moves to another
// epoch is a NotLeaderError.
func (p *partition) waitFetchable(ctx context.Context, offset int64, epoch int32, wait time.Duration) (int64, error) {
	start := time.Now()
	dataEnd, commitEnd := start.Add(wait), start.Add(max(wait, p.env.lagMax))
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
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
		end := dataEnd
		if offset < p.log.LogEndOffset() {
			end = commitEnd
		}
		d := time.Until(end)
		if d <= 0 {
			p.mu.Unlock()
			return hw, nil
		}
		ch := p.hwMoved.wait()
		p.mu.Unlock()
		if t == nil {
			t = time.NewTimer(d)
		} else {
			t.Reset(d)
		}
		if _, err := waitFor(ctx, ch, t); err != nil {
			return hw, err
		}
	}
}
