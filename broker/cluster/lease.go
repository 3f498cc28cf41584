package cluster

import (
	"sync"
	"time"
)

// The metadata lease says whether this broker may trust its own metadata
// image right now, so that a broker that was away — a process stopped
// with SIGSTOP, a VM frozen, a long stall — does not serve as partition
// leader on an image the cluster has moved past. Resumed, such a broker
// answers the requests queued while it was away before its metadata
// catches up: as the leader of a topic that was deleted meanwhile (and
// perhaps created again under the same name), of a partition whose
// leadership moved, with the records it had.
//
// Every heartbeat answered by the controller vouches for the metadata: the
// controller (a raft leader the quorum still follows, VerifyLeader)
// answers with the index of its own image, and once this broker's image
// has reached that index, its metadata was current when the heartbeat was
// sent. The lease holds from then on until either
//
//   - the session timeout has passed since that heartbeat was sent: by
//     then the controller may have fenced this broker and moved its
//     leaderships (it counts from the heartbeat's arrival, which is
//     later), or
//   - this process stalled: a watchdog that ticks every stallTick noticed
//     a gap of more than stallThreshold, or has not ticked for that long.
//     A shorter absence than the session timeout leaves the broker
//     unfenced, but is long enough for a topic to be deleted and created
//     again; only a heartbeat sent after the stall renews the lease.
//
// Heartbeats go every HeartbeatInterval, so after a stall the lease comes
// back within about one interval, and a broker that cannot reach the
// controller for the session timeout loses it about when the controller
// fences it anyway. The replica layer waits for the lease before it
// appends or serves a consumer's read as leader (broker/replica).
type metadataLease struct {
	mu sync.Mutex
	// confirmed: the latest heartbeat whose answer this broker's image has
	// reached: when it was sent and the controller's image index.
	confirmedAt    time.Time
	confirmedIndex uint64
	// pending: the latest answered heartbeat, not yet reached.
	pendingAt    time.Time
	pendingIndex uint64
	// lastTick is the watchdog's latest tick; stallEnd the tick that
	// ended the latest stall it noticed.
	lastTick time.Time
	stallEnd time.Time
}

const (
	// stallTick is the watchdog's period.
	stallTick = 100 * time.Millisecond
)

// stallThreshold is the longest gap between two watchdog ticks that is
// not a stall: twice the heartbeat interval, so a stall is longer than a
// heartbeat round would tolerate, yet far shorter than the session timeout.
func (n *Node) stallThreshold() time.Duration { return 2 * n.cfg.HeartbeatInterval }

// heartbeatAnswered records the controller's answer to a heartbeat sent at
// sent.
func (n *Node) heartbeatAnswered(sent time.Time, index uint64) {
	l := &n.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	if sent.After(l.pendingAt) {
		l.pendingAt, l.pendingIndex = sent, index
	}
}

// MetadataLease reports whether this broker's metadata is known to be
// current (see metadataLease) and, if so, the image index it must have
// acted on: a reader of the metadata that has handled an image at least
// that new is as current as the lease says.
func (n *Node) MetadataLease() (index uint64, ok bool) {
	now := time.Now()
	img := n.Image()
	l := &n.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.pendingAt.IsZero() && img.Index >= l.pendingIndex && l.pendingAt.After(l.confirmedAt) {
		l.confirmedAt, l.confirmedIndex = l.pendingAt, l.pendingIndex
	}
	switch {
	case l.confirmedAt.IsZero(),
		now.Sub(l.confirmedAt) >= n.cfg.SessionTimeout,
		!l.confirmedAt.After(l.stallEnd),
		now.Sub(l.lastTick) > n.stallThreshold():
		return 0, false
	}
	return l.confirmedIndex, true
}

// lastStallEnd returns when the latest stall of this process ended, as
// the watchdog saw it, or now while the watchdog has not ticked for longer
// than stallThreshold: a stall is under way, or has just ended and the
// watchdog has not run since. The controller counts a broker's silence
// from no earlier than this (controller.lastSeen).
func (n *Node) lastStallEnd() time.Time {
	now := time.Now()
	l := &n.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastTick) > n.stallThreshold() {
		return now
	}
	return l.stallEnd
}

// watchStalls is the lease's watchdog: a tick that comes more than
// stallThreshold after the one before ends a stall.
func (n *Node) watchStalls() {
	defer n.wg.Done()
	t := time.NewTicker(stallTick)
	defer t.Stop()
	l := &n.lease
	l.mu.Lock()
	l.lastTick = time.Now()
	l.mu.Unlock()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		l.mu.Lock()
		if gap := now.Sub(l.lastTick); gap > n.stallThreshold() {
			l.stallEnd = now
			n.log.Warn("This process stalled; partitions lead again once a heartbeat confirms the metadata",
				"stall", gap.Round(time.Millisecond))
		}
		l.lastTick = now
		l.mu.Unlock()
	}
}
