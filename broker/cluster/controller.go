package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// controller runs on the raft leader. It tracks broker heartbeats, fences
// silent brokers, elects leaders, drives drains and reassignments, and
// moves leadership back to preferred replicas. Its decisions are made on
// the current image and proposed as commands; Apply re-validates them, so
// a decision made on a stale image fails rather than corrupts.
//
// Heartbeat bookkeeping is guarded by mu; everything else runs on the one
// goroutine of run, so decisions never interleave.
type controller struct {
	n      *Node
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	kick   chan struct{}
	// ready is set once the image holds every entry of earlier terms.
	ready atomic.Bool

	mu          sync.Mutex
	since       time.Time         // when this controller took over
	seen        map[int]time.Time // last heartbeat per broker
	applied     map[int]uint64    // metadata index per broker, as its heartbeats say
	wantUnfence map[int]bool
	// restarted are the brokers whose registration under this controller
	// ended an unfenced previous incarnation (heardFrom leaves them out).
	restarted map[int]bool

	lastPreferred time.Time
	warned        map[string]bool
	// planned is the image the image-driven duties (planImage) last
	// finished on, every proposal they made accepted; plans counts their
	// passes. preferredPlanned is the same for electPreferred.
	planned          *metadata.Image
	plans            atomic.Int64
	preferredPlanned *metadata.Image
}

func newController(n *Node) *controller {
	ctx, cancel := context.WithCancel(n.ctx)
	c := &controller{n: n, ctx: ctx, cancel: cancel, done: make(chan struct{}), kick: make(chan struct{}, 1),
		since: time.Now(), seen: map[int]time.Time{}, applied: map[int]uint64{}, wantUnfence: map[int]bool{}, restarted: map[int]bool{},
		lastPreferred: time.Now(), warned: map[string]bool{}}
	go c.run()
	return c
}

func (c *controller) stop() {
	c.cancel()
	<-c.done
}

func (c *controller) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *controller) run() {
	defer close(c.done)
	// Entries of earlier terms may not be applied yet; decide nothing
	// before they are.
	for c.n.raft.Barrier(c.n.cfg.SessionTimeout).Error() != nil {
		if c.ctx.Err() != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The barrier committed the earlier terms' entries here; followers
	// apply them once told.
	c.n.announceCommits()
	c.mu.Lock()
	// Every broker gets a full session from now: heartbeats went to the
	// previous controller until a moment ago.
	c.since = time.Now()
	c.mu.Unlock()
	c.ready.Store(true)

	tick := time.NewTicker(c.n.cfg.HeartbeatInterval / 2)
	defer tick.Stop()
	for {
		c.step()
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		case <-c.kick:
		}
	}
}

// step runs one round of the controller's duties.
func (c *controller) step() {
	img := c.n.Image()
	if img.ClusterID == "" {
		c.propose(metadata.Command{Type: metadata.CmdInitCluster,
			InitCluster: &metadata.InitCluster{ClusterID: uuid.NewString()}})
	}
	c.fenceSilent()
	c.unfenceReturning()
	c.planImage()
	c.electPreferred()
}

// planImage runs the duties that scan every partition of the image —
// elections of leaderless partitions, drains and repairs of
// reassignments, the offsets topic's replication — when the image has
// changed since they last finished. Their decisions depend on nothing but
// the image (broker liveness included: fencing is in it) and the
// configuration, so on an unchanged image they would find nothing new; an
// idle cluster of thousands of partitions then costs no scan per tick.
// A pass whose proposal failed is not finished: the next tick runs it
// again, as every tick did before. A pass that proposed something changed
// the image, so the next tick confirms on the new one that nothing is
// left. No periodic pass is needed on top: nothing these duties read can
// change without a new image.
func (c *controller) planImage() {
	img := c.n.Image()
	if img == c.planned {
		return
	}
	c.plans.Add(1)
	done := c.electLeaderless()
	done = c.driveReassignments() && done
	done = c.raiseOffsetsReplication() && done
	if done {
		c.planned = img
	}
}

// heartbeat records a heartbeat from broker id at registration epoch, which
// has applied the metadata up to index.
func (c *controller) heartbeat(id int, epoch, index uint64) (HeartbeatResponse, error) {
	if !c.ready.Load() {
		return HeartbeatResponse{}, ErrNotController
	}
	b := c.n.Image().Broker(id)
	if b == nil {
		return HeartbeatResponse{}, ErrUnknownBroker
	}
	if epoch < b.Epoch {
		return HeartbeatResponse{}, metadata.ErrStaleBrokerEpoch
	}
	c.mu.Lock()
	c.seen[id] = time.Now()
	c.applied[id] = max(c.applied[id], index)
	unfence := b.Fenced && !b.ShuttingDown
	if unfence {
		c.wantUnfence[id] = true
	}
	c.mu.Unlock()
	if unfence {
		c.wake()
	}
	// The answer vouches for the metadata as of now (lease.go): only a
	// leader the quorum still follows may give it, not one that was
	// paused and has not noticed yet that another was elected.
	if err := c.n.raft.VerifyLeader().Error(); err != nil {
		return HeartbeatResponse{}, fmt.Errorf("%w: %v", ErrNotController, err)
	}
	return HeartbeatResponse{Fenced: b.Fenced, MetadataIndex: c.n.Image().Index}, nil
}

// touch counts a registration as a heartbeat; restart says it ended an
// unfenced previous incarnation.
func (c *controller) touch(id int, restart bool) {
	c.mu.Lock()
	c.seen[id] = time.Now()
	if restart {
		c.restarted[id] = true
	}
	c.mu.Unlock()
}

// heardFrom lists, sorted, the live brokers other than except that this
// controller has heard from (a heartbeat or registration of their current
// incarnation) since it took over and within their session timeout, and
// itself when it has registered in this process: the brokers known to be
// up, which may take over from a restarted broker. A broker it has not
// heard from yet may be down without being fenced; one that itself came
// back from a crash under this controller is no better a home.
func (c *controller) heardFrom(except int) []int {
	img := c.n.Image()
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, id := range img.BrokerIDs() {
		if id == except || !img.Live(id) || c.restarted[id] {
			continue
		}
		if id == c.n.cfg.BrokerID {
			if img.Broker(id).Incarnation == c.n.incarnation {
				out = append(out, id)
			}
			continue
		}
		if t := c.seen[id]; t.After(c.since) && time.Since(t) <= c.n.cfg.SessionTimeout {
			out = append(out, id)
		}
	}
	return out
}

// lastSeen is when broker id was last heard from, for its session: its
// latest heartbeat, but no earlier than when this controller took over or
// when a stall of this process ended. While this process stood still (a
// long pause, a starved or frozen machine) it handled no heartbeat, so the
// silence it finds afterwards is its own, not the brokers': fencing them
// for it would move every leadership off brokers that kept heartbeating.
// Each broker gets a full session from the stall's end instead, as from a
// new controller's start.
func (c *controller) lastSeen(id int) time.Time {
	from := c.n.lastStallEnd()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.since.After(from) {
		from = c.since
	}
	if t := c.seen[id]; t.After(from) {
		return t
	}
	return from
}

func (c *controller) fenceSilent() {
	img := c.n.Image()
	for _, id := range img.BrokerIDs() {
		b := img.Broker(id)
		if b.Fenced || id == c.n.cfg.BrokerID {
			continue
		}
		if silent := time.Since(c.lastSeen(id)); silent > c.n.cfg.SessionTimeout {
			if c.propose(metadata.Command{Type: metadata.CmdFenceBroker, Broker: &metadata.BrokerRef{ID: id}}) {
				c.n.log.Warn("Fenced broker after missed heartbeats", "fenced", id, "silent", silent.Round(time.Millisecond))
			}
		}
	}
}

func (c *controller) unfenceReturning() {
	c.mu.Lock()
	ids := c.wantUnfence
	c.wantUnfence = map[int]bool{}
	c.mu.Unlock()
	img := c.n.Image()
	for id := range ids {
		b := img.Broker(id)
		if b == nil || !b.Fenced || b.ShuttingDown || time.Since(c.lastSeen(id)) > c.n.cfg.SessionTimeout {
			continue
		}
		if c.propose(metadata.Command{Type: metadata.CmdUnfenceBroker, Broker: &metadata.BrokerRef{ID: id}}) {
			c.n.log.Info("Unfenced broker", "unfenced", id)
		}
	}
}

// electLeaderless gives a leader to every partition that has none and
// could have one (unfencing and registration do this in Apply already;
// this catches config changes and anything missed). It reports false when
// its proposal failed.
func (c *controller) electLeaderless() bool {
	if tps := c.n.Image().ElectionCandidates(false); len(tps) > 0 {
		return c.propose(metadata.Command{Type: metadata.CmdElectLeaders,
			ElectLeaders: &metadata.ElectLeaders{Partitions: tps}})
	}
	return true
}

// electPreferred moves leadership back to preferred replicas that are in
// sync, every LeaderRebalanceInterval (Kafka's auto.leader.rebalance),
// when the image changed since the last pass that finished: on the same
// image the pass would find the same nothing (see planImage).
func (c *controller) electPreferred() {
	every := c.n.cfg.LeaderRebalanceInterval
	if every < 0 || time.Since(c.lastPreferred) < every {
		return
	}
	img := c.n.Image()
	if img == c.preferredPlanned {
		return
	}
	c.lastPreferred = time.Now()
	if tps := img.ElectionCandidates(true); len(tps) > 0 {
		if !c.propose(metadata.Command{Type: metadata.CmdElectLeaders,
			ElectLeaders: &metadata.ElectLeaders{Preferred: true, Partitions: tps}}) {
			return
		}
		c.n.log.Info("Moved leadership back to preferred replicas", "partitions", len(tps))
	}
	c.preferredPlanned = img
}

// propose applies cmd and reports whether it succeeded; failures are
// logged once per kind, since the next round retries.
func (c *controller) propose(cmd metadata.Command) bool {
	_, err := c.n.apply(c.ctx, cmd)
	if err == nil {
		delete(c.warned, string(cmd.Type))
		return true
	}
	if !errors.Is(err, ErrNotController) && c.ctx.Err() == nil && !c.warned[string(cmd.Type)] {
		c.warned[string(cmd.Type)] = true
		c.n.log.Warn("Controller command failed", "command", cmd.Type, "error", err)
	}
	return false
}
