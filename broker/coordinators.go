package broker

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/group"
	"github.com/kairolog/kairolog/broker/replica"
)

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
type coordinators struct {
	b     *Broker
	log   *slog.Logger
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

func newCoordinators(b *Broker) *coordinators {
	return &coordinators{b: b, log: b.log.With("component", "group-coordinators"), slots: map[int32]*coordSlot{},
		closed: map[int32]*group.Coordinator{}}
}

// leadsOffsetsPartition reports whether the image names this broker the
// leader of partition of __consumer_offsets.
func (b *Broker) leadsOffsetsPartition(partition int32) bool {
	t := b.image().Topic(offsetsTopic)
	return t != nil && int(partition) < len(t.Partitions) && int32(t.Partitions[partition].Leader) == b.id
}

// onLeadershipChange is replica.Config.OnLeadershipChange.
func (cs *coordinators) onLeadershipChange(topic string, partition int32, leader bool, epoch int32) {
	if topic != offsetsTopic {
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
	if !leader || cs.b.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(cs.b.ctx)
	slot := &coordSlot{epoch: epoch, journal: &offsetsJournal{b: cs.b, partition: partition},
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
func (cs *coordinators) closeSlot(partition int32, s *coordSlot) {
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
func (cs *coordinators) load(ctx context.Context, partition int32, slot *coordSlot) {
	select {
	case <-cs.b.managerReady:
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
func (cs *coordinators) replay(ctx context.Context, partition int32, j *offsetsJournal) (coord *group.Coordinator, records int, size int64, err error) {
	s := cs.b.settings
	coord, err = group.New(group.Config{Journal: j, Partitions: cs.b.groupView(), Now: cs.b.now,
		SessionTimeout: s.GroupStaleTimeout, CleanupInterval: s.GroupCleanupInterval})
	if err != nil {
		return nil, 0, 0, err
	}
	info, err := cs.b.replicas.PartitionInfo(offsetsTopic, partition)
	if err != nil {
		return nil, 0, 0, err
	}
	off, end := info.LogStartOffset, info.LogEndOffset
	for off < end {
		res, err := cs.b.replicas.Fetch(ctx, offsetsTopic, partition, off, 8<<20, 0, 500*time.Millisecond)
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

// get returns the ready coordinator of partition, waiting for a load in
// progress.
func (cs *coordinators) get(ctx context.Context, partition int32) (*group.Coordinator, error) {
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
		if !cs.b.leadsOffsetsPartition(partition) {
			return nil, coordinatorNotAvailable("this broker does not coordinate partition %d of %s", partition, offsetsTopic)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			return nil, coordinatorNotAvailable("the coordinator of partition %d is not open yet", partition)
		case <-time.After(5 * time.Millisecond):
		}
	}
	select {
	case <-slot.ready:
		return slot.coord, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, coordinatorNotAvailable("the coordinator of partition %d is still loading", partition)
	}
}

// loaded returns the ready coordinators.
func (cs *coordinators) loaded() []*group.Coordinator {
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

// loading reports how many coordinators this broker should run are not
// serving yet: still replaying, or not even opened although the image
// already names this broker the partition's leader.
func (cs *coordinators) loading() int {
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
	if t := cs.b.image().Topic(offsetsTopic); t != nil {
		for _, p := range t.Partitions {
			if int32(p.Leader) == cs.b.id && cs.slots[int32(p.ID)] == nil {
				n++
			}
		}
	}
	return n
}

// runCleanup is the background stale-member loop of the original broker,
// over every coordinator this broker runs: remove members not seen for their
// session timeout, then rebalance or delete the saved assignments of the
// groups that lost members. Errors are logged and the loop goes on.
func (cs *coordinators) runCleanup(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cs.cleanupOnce(ctx)
	}
}

func (cs *coordinators) cleanupOnce(ctx context.Context) {
	for _, c := range cs.loaded() {
		if err := c.CleanupOnce(ctx, cs.b.now()); err != nil && ctx.Err() == nil {
			cs.log.Warn("Stale-member cleanup failed", "error", err)
		}
	}
}

// closeAll closes every coordinator (shutdown).
func (cs *coordinators) closeAll() {
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

func coordinatorNotAvailable(format string, args ...any) error {
	e := api.Errorf(api.CodeCoordinatorNotAvailable, format, args...)
	e.RetryAfterMs = 200
	return e
}
