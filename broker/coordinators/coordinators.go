// Package coordinators runs this broker's consumer-group coordinators: one
// group.Coordinator per partition of __consumer_offsets this broker leads,
// built when the leadership arrives by replaying the partition, closed when
// it leaves. Each journals its groups' changes in its partition
// (journal.go: acks=all appends, so group state is replicated exactly as
// data is) and compacts it with snapshots (compaction.go). The core asks
// it for the coordinator of a group's partition (Get) and runs the
// original broker's background stale-member pass over every coordinator
// (RunCleanup).
//
// It sits between the core and the layers below: it knows the replica
// manager (appends, replays, log start moves) and the metadata image
// (which partitions this broker leads), not the core.
package coordinators

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
	"github.com/kairolog/kairolog/broker/group"
	"github.com/kairolog/kairolog/broker/replica"
)

// Topic is the internal topic that journals consumer-group state.
const Topic = "__consumer_offsets"

// Config is what the coordinators need from the broker.
type Config struct {
	// BrokerID is this broker's id.
	BrokerID int32
	// Image is the broker's current metadata: which partitions of Topic it
	// leads.
	Image func() *metadata.Image
	// Partitions is what coordinators read of other topics: partition
	// counts, and offsets from each partition's leader.
	Partitions group.Partitions
	// SessionTimeout and CleanupInterval are the groups' stale-member
	// timeout and how often the cleanup pass runs; CompactBytes is
	// offsets.compact.bytes (compaction.go).
	SessionTimeout  time.Duration
	CleanupInterval time.Duration
	CompactBytes    int64
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms
	// (group.Config).
	InitialRebalanceDelay time.Duration
	// Now is the clock of group membership.
	Now    func() time.Time
	Logger *slog.Logger
}

// coordinatorLoadWait is how long a group request waits for this broker's
// coordinator of the group to finish replaying its partition before
// answering COORDINATOR_NOT_AVAILABLE.
const coordinatorLoadWait = 10 * time.Second

// coordSlot is the coordinator of one __consumer_offsets partition this
// broker leads: built when leadership arrives, by replaying the partition,
// and closed when it leaves.
type coordSlot struct {
	epoch   int32
	journal *offsetsJournal
	coord   *group.Coordinator // set when ready is closed
	ready   chan struct{}
	// prev is the coordinator this broker ran before on the partition, if
	// it may still be finishing operations; the load waits for it.
	prev *group.Coordinator
	// ctx ends when the slot closes; loading and compaction run under it.
	ctx        context.Context
	cancel     context.CancelFunc
	compacting atomic.Bool
}

// coordinators holds the group coordinators of the partitions this broker
// leads. The mutex guards only the map; loading runs in its own goroutine
// because the replica manager calls onLeadershipChange from its metadata
// goroutine, which must not wait for a replay.
type Coordinators struct {
	cfg Config
	log *slog.Logger
	// replicas is set by Start, before which no coordinator loads: the
	// replica manager calls OnLeadershipChange while it is being built.
	replicas *replica.Manager
	started  chan struct{}
	// ctx ends with Close; every slot's context derives from it.
	ctx    context.Context
	cancel context.CancelFunc

	mu    sync.Mutex
	slots map[int32]*coordSlot
	// closed holds, per partition, the last coordinator closed here, until
	// it has drained.
	closed map[int32]*group.Coordinator
	wg     sync.WaitGroup
	// bg counts compactions (compaction.go); bgMu guards starting one
	// against closeAll's wait and is never held while taking another lock.
	bgMu     sync.Mutex
	bgClosed bool
	bg       sync.WaitGroup
}

// New returns the coordinators of a broker; they load once Start hands
// them the replica manager.
func New(cfg Config) *Coordinators {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Coordinators{cfg: cfg, log: cfg.Logger.With("component", "group-coordinators"), slots: map[int32]*coordSlot{},
		closed: map[int32]*group.Coordinator{}, started: make(chan struct{}), ctx: ctx, cancel: cancel}
}

// Start lets the coordinators load, over the broker's replica manager.
func (cs *Coordinators) Start(replicas *replica.Manager) {
	cs.replicas = replicas
	close(cs.started)
}

// leads reports whether the image names this broker the leader of
// partition of Topic.
func (cs *Coordinators) leads(partition int32) bool {
	t := cs.cfg.Image().Topic(Topic)
	return t != nil && int(partition) < len(t.Partitions) && int32(t.Partitions[partition].Leader) == cs.cfg.BrokerID
}

// OnLeadershipChange is replica.Config.OnLeadershipChange: a leadership of
// a partition of Topic opens its coordinator, its loss closes it.
func (cs *Coordinators) OnLeadershipChange(topic string, partition int32, leader bool, epoch int32) {
	if topic != Topic {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if old := cs.slots[partition]; old != nil {
		if leader && old.epoch == epoch {
			return
		}
		cs.closeSlot(partition, old)
	}
	if !leader || cs.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(cs.ctx)
	slot := &coordSlot{epoch: epoch, journal: &offsetsJournal{cs: cs, partition: partition},
		ready: make(chan struct{}), ctx: ctx, cancel: cancel}
	if prev := cs.closed[partition]; prev != nil {
		select {
		case <-prev.Drained():
			delete(cs.closed, partition)
		default:
			slot.prev = prev
		}
	}
	slot.journal.grown = func() { cs.maybeCompact(partition, slot) }
	cs.slots[partition] = slot
	cs.wg.Add(1)
	go func() {
		defer cs.wg.Done()
		cs.load(ctx, partition, slot)
	}()
}

// closeSlot ends a coordinator; the caller holds cs.mu. It does not wait
// for the coordinator's operations (see group.Coordinator.Close): the
// replica manager calls it from its metadata goroutine.
func (cs *Coordinators) closeSlot(partition int32, s *coordSlot) {
	s.cancel()
	select {
	case <-s.ready:
		s.coord.Close()
		cs.closed[partition] = s.coord
	default:
	}
	delete(cs.slots, partition)
	cs.log.Info("Stopped coordinating groups", "partition", partition, "epoch", s.epoch)
}

// load replays the partition into a new coordinator, retrying until it
// succeeds or the leadership ends.
func (cs *Coordinators) load(ctx context.Context, partition int32, slot *coordSlot) {
	select {
	case <-cs.started:
	case <-ctx.Done():
		return
	}
	// An append of the previous coordinator still in flight would land
	// after the replay read the log end and be missed.
	if slot.prev != nil {
		select {
		case <-slot.prev.Drained():
		case <-ctx.Done():
			return
		}
	}
	start := time.Now()
	for attempt := 0; ; attempt++ {
		coord, n, size, err := cs.replay(ctx, partition, slot.journal)
		if err == nil {
			cs.mu.Lock()
			if cs.slots[partition] != slot || ctx.Err() != nil {
				cs.mu.Unlock()
				coord.Close()
				return
			}
			slot.coord = coord
			// Everything replayed counts towards the next compaction.
			slot.journal.written.Store(size)
			close(slot.ready)
			cs.mu.Unlock()
			cs.log.Info("Coordinating groups", "partition", partition, "epoch", slot.epoch,
				"records", n, "bytes", size, "duration", time.Since(start))
			cs.maybeCompact(partition, slot)
			return
		}
		if ctx.Err() != nil {
			return
		}
		if attempt%20 == 0 {
			cs.log.Warn("Loading group coordinator failed; retrying", "partition", partition, "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// replay reads the partition from its log start to the log end offset it
// had when the load began. The leader's whole log becomes committed (its
// followers truncate to it), so records above the high watermark are
// waited for, not skipped.
func (cs *Coordinators) replay(ctx context.Context, partition int32, j *offsetsJournal) (coord *group.Coordinator, records int, size int64, err error) {
	coord, err = group.New(group.Config{Journal: j, Partitions: cs.cfg.Partitions, Now: cs.cfg.Now,
		SessionTimeout: cs.cfg.SessionTimeout, CleanupInterval: cs.cfg.CleanupInterval,
		InitialRebalanceDelay: cs.cfg.InitialRebalanceDelay})
	if err != nil {
		return nil, 0, 0, err
	}
	info, err := cs.replicas.PartitionInfo(Topic, partition)
	if err != nil {
		return nil, 0, 0, err
	}
	off, end := info.LogStartOffset, info.LogEndOffset
	for off < end {
		res, err := cs.replicas.Fetch(ctx, Topic, partition, off, 8<<20, 0, 500*time.Millisecond)
		var oor *replica.OffsetOutOfRangeError
		if errors.As(err, &oor) && off < oor.LogStartOffset {
			off = oor.LogStartOffset
			continue
		}
		if err != nil {
			return nil, 0, 0, err
		}
		for _, r := range res.Records {
			if err := coord.Replay(r.Value); err != nil {
				cs.log.Warn("Skipping an unreadable group record", "partition", partition, "offset", r.Offset, "error", err)
			}
			off = r.Offset + 1
			records++
			size += int64(len(r.Key) + len(r.Value))
		}
	}
	coord.Loaded()
	return coord, records, size, nil
}

// Get returns the ready coordinator of partition, waiting for a load in
// progress; COORDINATOR_NOT_AVAILABLE when this broker does not lead the
// partition or the load takes too long.
func (cs *Coordinators) Get(ctx context.Context, partition int32) (*group.Coordinator, error) {
	t := time.NewTimer(coordinatorLoadWait)
	defer t.Stop()
	// The image may name this broker the partition's leader a moment before
	// the replica manager has made it one and opened the slot.
	var slot *coordSlot
	for {
		cs.mu.Lock()
		slot = cs.slots[partition]
		cs.mu.Unlock()
		if slot != nil {
			break
		}
		if !cs.leads(partition) {
			return nil, NotAvailable("this broker does not coordinate partition %d of %s", partition, Topic)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			return nil, NotAvailable("the coordinator of partition %d is not open yet", partition)
		case <-time.After(5 * time.Millisecond):
		}
	}
	select {
	case <-slot.ready:
		return slot.coord, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, NotAvailable("the coordinator of partition %d is still loading", partition)
	}
}

// Loaded returns the ready coordinators.
func (cs *Coordinators) Loaded() []*group.Coordinator {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var out []*group.Coordinator
	for _, s := range cs.slots {
		select {
		case <-s.ready:
			out = append(out, s.coord)
		default:
		}
	}
	return out
}

// Loading reports how many coordinators this broker should run are not
// serving yet: still replaying, or not even opened although the image
// already names this broker the partition's leader.
func (cs *Coordinators) Loading() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	n := 0
	for _, s := range cs.slots {
		select {
		case <-s.ready:
		default:
			n++
		}
	}
	if t := cs.cfg.Image().Topic(Topic); t != nil {
		for _, p := range t.Partitions {
			if int32(p.Leader) == cs.cfg.BrokerID && cs.slots[int32(p.ID)] == nil {
				n++
			}
		}
	}
	return n
}

// RunCleanup is the background stale-member loop of the original broker,
// over every coordinator this broker runs: remove members not seen for their
// session timeout, then rebalance or delete the saved assignments of the
// groups that lost members. Errors are logged and the loop goes on.
func (cs *Coordinators) RunCleanup(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cs.CleanupOnce(ctx)
	}
}

// CleanupOnce runs one pass of RunCleanup now.
func (cs *Coordinators) CleanupOnce(ctx context.Context) {
	for _, c := range cs.Loaded() {
		if err := c.CleanupOnce(ctx, cs.cfg.Now()); err != nil && ctx.Err() == nil {
			cs.log.Warn("Stale-member cleanup failed", "error", err)
		}
	}
}

// Close closes every coordinator (shutdown).
func (cs *Coordinators) Close() {
	cs.cancel()
	cs.mu.Lock()
	for p, s := range cs.slots {
		cs.closeSlot(p, s)
	}
	cs.mu.Unlock()
	cs.wg.Wait()
	cs.bgMu.Lock()
	cs.bgClosed = true
	cs.bgMu.Unlock()
	cs.bg.Wait()
}

// NotAvailable is COORDINATOR_NOT_AVAILABLE, retriable soon.
func NotAvailable(format string, args ...any) error {
	e := api.Errorf(api.CodeCoordinatorNotAvailable, format, args...)
	e.RetryAfterMs = 200
	return e
}
