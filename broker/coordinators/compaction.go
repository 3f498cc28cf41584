package coordinators

import (
	"context"
	"time"
)

// Compaction of __consumer_offsets. A coordinator journals every group
// change, so its partition grows without end; Kafka compacts the topic by
// key. KairoLog instead lets the coordinator rewrite its own state: when the
// records beyond the last snapshot reach offsets.compact.bytes and outweigh
// that snapshot (the log is then at least half obsolete, as with Kafka's
// min.cleanable.dirty.ratio of 0.5), it
//
//  1. notes the partition's log end offset,
//  2. appends a snapshot of every group, each written under the group's
//     lock with acks=all (group.Coordinator.WriteSnapshot), and
//  3. moves the partition's log start to the offset noted in step 1
//     (replica.Manager.DeleteRecords; followers follow).
//
// Everything before that offset is then reflected in the snapshots, and a
// coordinator that loads the partition later (a restart, a leadership move)
// replays only the snapshots and what followed them. A compaction that
// fails (the leadership moved, a replica fell out of the ISR) leaves the log
// start where it was; the next append past the threshold tries again.
// Disk space comes back when a whole segment lies below the log start
// (offsets.topic.segment.bytes), as with retention.

// compactionTimeout bounds one compaction: snapshot appends and the log
// start move.
const compactionTimeout = time.Minute

// compactionDue reports whether the journal of j should be compacted now:
// the group changes since the last snapshot reach offsets.compact.bytes and
// outweigh the snapshot.
func (cs *Coordinators) compactionDue(j *offsetsJournal) bool {
	w := j.written.Load()
	return w >= cs.cfg.CompactBytes && w >= j.snapshotBytes.Load()
}

// maybeCompact starts a compaction of slot's partition in the background if
// one is due and none is running. The journal calls it after each append.
func (cs *Coordinators) maybeCompact(partition int32, slot *coordSlot) {
	if !cs.compactionDue(slot.journal) || !slot.compacting.CompareAndSwap(false, true) {
		return
	}
	select {
	case <-slot.ready:
	default:
		slot.compacting.Store(false)
		return // replaying: the coordinator is not there yet
	}
	// The caller may hold a group's lock (the journal calls this from an
	// append), so only bgMu is taken here: closeSlot holds cs.mu while it
	// closes a coordinator, which takes group locks.
	cs.bgMu.Lock()
	if cs.bgClosed || slot.ctx.Err() != nil {
		cs.bgMu.Unlock()
		slot.compacting.Store(false)
		return
	}
	cs.bg.Add(1)
	cs.bgMu.Unlock()
	go func() {
		defer cs.bg.Done()
		defer slot.compacting.Store(false)
		ctx, cancel := context.WithTimeout(slot.ctx, compactionTimeout)
		defer cancel()
		cs.compact(ctx, partition, slot)
	}()
}

// compact runs one compaction; see the top of this file.
func (cs *Coordinators) compact(ctx context.Context, partition int32, slot *coordSlot) {
	start := time.Now()
	j := slot.journal
	info, err := cs.replicas.PartitionInfo(Topic, partition)
	if err != nil || !info.IsLeader {
		return
	}
	before, written, snapshotted := info.LogEndOffset, j.written.Load(), j.snapshotted.Load()
	groups, err := slot.coord.WriteSnapshot(ctx)
	if err != nil {
		if ctx.Err() == nil {
			cs.log.Warn("Compacting the group journal failed; the log start stays", "partition", partition, "error", err)
		}
		return
	}
	snapshot := j.snapshotted.Load() - snapshotted
	info, err = cs.replicas.PartitionInfo(Topic, partition)
	if err != nil {
		return
	}
	// With no group to snapshot, the last records may still await the
	// high watermark (a failed acks=all); they need not be kept either way.
	logStart, err := cs.replicas.DeleteRecords(Topic, partition, min(before, info.HighWatermark))
	if err != nil {
		if ctx.Err() == nil {
			cs.log.Warn("Moving the group journal's log start failed", "partition", partition, "error", err)
		}
		return
	}
	j.written.Add(-written)
	j.snapshotBytes.Store(snapshot)
	cs.log.Info("Compacted the group journal", "partition", partition, "groups", groups,
		"log_start_offset", logStart, "dropped_bytes", written, "snapshot_bytes", snapshot,
		"duration", time.Since(start).Round(time.Millisecond))
}
