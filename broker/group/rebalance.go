package group

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// pendingJoin is a JoinGroup waiting for the generation barrier.
type pendingJoin struct {
	clientID         string
	topics           []string // for a member that assigns, its first protocol's
	protocolType     string
	protocols        []Protocol
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	reply            chan joinReply // buffered: answered exactly once, never blocks
}

type joinReply struct {
	res JoinResult
	err error
}

// beginRebalance moves g to PreparingRebalance, with a deadline after which
// members that have not rejoined are dropped. It does nothing when a
// rebalance is already under way.
func (c *Coordinator) beginRebalance(g *group, now time.Time) {
	if g.state == PreparingRebalance || g.state == Dead {
		return
	}
	g.state = PreparingRebalance
	g.epoch++
	g.stopTimer()
	g.rebalanceDeadline = now.Add(c.groupRebalanceTimeout(g))
	clear(g.synced)
	g.failSyncs(fmt.Errorf("%w: group %q is rebalancing", ErrRebalanceInProgress, g.id))
}

// groupRebalanceTimeout is the longest rebalance timeout of the members
// that must rejoin, as in Kafka.
func (c *Coordinator) groupRebalanceTimeout(g *group) time.Duration {
	var d time.Duration
	for id, m := range g.members {
		if !m.inBarrier() {
			continue
		}
		rt := m.rebalanceTimeout
		if j := g.joins[id]; j != nil {
			rt = j.rebalanceTimeout
		}
		if rt == 0 {
			rt = c.rebalanceTimeout
		}
		d = max(d, rt)
	}
	if d == 0 {
		d = c.rebalanceTimeout
	}
	return d
}

// settle moves a rebalance on after any change: it completes the rebalance
// when every member has rejoined, and otherwise makes sure a timer will
// complete it at the deadline. A first generation held back by the initial
// delay waits for the delay's timer instead.
func (c *Coordinator) settle(ctx context.Context, g *group) {
	if g.state != PreparingRebalance {
		return
	}
	if g.delaying() {
		c.armInitialDelay(g)
		return
	}
	if g.allJoined() {
		c.completeRebalance(ctx, g, c.now())
		return
	}
	if g.timer != nil {
		return
	}
	wait := g.rebalanceDeadline.Sub(c.now())
	if wait <= 0 {
		// A deadline inherited from the journal that passed while nobody
		// coordinated the group: give the members a full timeout again.
		wait = c.groupRebalanceTimeout(g)
		g.rebalanceDeadline = c.now().Add(wait)
	}
	epoch := g.epoch
	g.timer = time.AfterFunc(wait, func() { c.rebalanceExpired(g, epoch) })
}

// rebalanceExpired completes the rebalance epoch of g at its deadline,
// dropping the members that did not rejoin.
func (c *Coordinator) rebalanceExpired(g *group, epoch uint64) {
	if !c.relock(g) {
		return // closed: the next coordinator completes the rebalance
	}
	defer c.unlockGroup(g)
	if g.removed || g.epoch != epoch || g.state != PreparingRebalance {
		return
	}
	g.timer = nil
	c.completeRebalance(context.Background(), g, c.now())
}

// completeRebalance ends the barrier: members with a pending join form the
// next generation, protocol members without one are dropped, the
// partitions are assigned (by the group's strategy, or for members that
// assign, by the leader later, with the protocol chosen now), the
// generation is journaled and every waiting join is answered.
func (c *Coordinator) completeRebalance(ctx context.Context, g *group, now time.Time) {
	// The generation belongs to the whole group, not to the request that
	// happened to complete it: a cancelled caller must not abort the write.
	ctx = context.WithoutCancel(ctx)
	g.endInitialDelay()
	ids := make([]string, 0, len(g.joins))
	for id := range g.joins {
		ids = append(ids, id)
	}
	slices.Sort(ids)

	leader := ""
	if len(ids) > 0 {
		leader = ids[0]
		if g.joins[g.leader] != nil {
			leader = g.leader
		}
	}
	rec, err := c.nextGeneration(g, ids, now)
	if err == nil {
		rec.Leader = leader
		err = c.write(ctx, g, rec)
	}
	if err != nil {
		// The joins fail so that their clients retry. A rebalance that the
		// journal requires stays under way; one that only those joins
		// started is undone, since nothing changed.
		c.failAllJoins(g, err)
		if !g.rebalancePending {
			g.epoch++
			g.stopTimer()
			g.state = Empty
			if g.hasProtocolMembers() {
				g.state = Stable
			}
		}
		return
	}
	if len(ids) > 0 {
		g.state = CompletingRebalance
	}
	for _, id := range ids {
		j := g.joins[id]
		delete(g.joins, id)
		j.reply <- joinReply{res: g.joinResult(id)}
	}
}

// nextGeneration is the record of the generation the members ids (each
// with a pending join) form. The coordinator assigns the partitions of a
// group whose members do not; for members that assign it picks the
// protocol, and the leader's SyncGroup brings the assignment.
func (c *Coordinator) nextGeneration(g *group, ids []string, now time.Time) (*record, error) {
	rec := &record{Type: recGen, TS: toMs(now), Gen: g.generation + 1, ProtocolType: g.protocolType}
	if len(ids) > 0 {
		rec.ProtocolType = g.joins[ids[0]].protocolType
	}
	var assigned []Assignment
	if rec.ProtocolType == "" {
		subs := make([]Subscription, 0, len(ids))
		for _, id := range ids {
			subs = append(subs, Subscription{MemberID: id, Topics: g.joins[id].topics})
		}
		var err error
		// Only an unknown strategy fails, and apply never stores one.
		if assigned, err = AssignPartitions(g.strategy(), subs, c.partitionCounts(subs)); err != nil {
			return nil, err
		}
	} else if len(ids) > 0 {
		var ok bool
		if rec.Protocol, ok = selectProtocol(ids, g.joins); !ok {
			// JoinGroup lets no member in that would make this happen.
			return nil, fmt.Errorf("%w: the members of group %q share no protocol", ErrInconsistentGroupProtocol, g.id)
		}
	}
	for i, id := range ids {
		j := g.joins[id]
		gm := genMember{ID: id, ClientID: j.clientID, Topics: j.topics,
			SessionMs: durMs(j.sessionTimeout), RebalanceMs: durMs(j.rebalanceTimeout), Seen: toMs(now)}
		if rec.ProtocolType == "" {
			gm.Assigned = toRecTPs(assigned[i].Topics)
		} else {
			gm.Topics = protocolNamed(j.protocols, rec.Protocol).Topics
			gm.Protocols = toRecProtocols(j.protocols)
		}
		rec.Members = append(rec.Members, gm)
	}
	return rec, nil
}

// partitionCounts looks up the partition count of every subscribed topic
// that exists.
func (c *Coordinator) partitionCounts(subs []Subscription) map[string]int32 {
	counts := map[string]int32{}
	for _, s := range subs {
		for _, t := range s.Topics {
			if _, done := counts[t]; done {
				continue
			}
			if n, ok := c.partitions.PartitionCount(t); ok {
				counts[t] = n
			} else {
				counts[t] = 0
			}
		}
	}
	return counts
}

// failJoins answers the pending joins of ids with err; members created by
// those joins disappear.
func (c *Coordinator) failJoins(g *group, ids []string, err error) {
	for _, id := range ids {
		j := g.joins[id]
		if j == nil {
			continue
		}
		delete(g.joins, id)
		if m := g.members[id]; m != nil && m.transient {
			delete(g.members, id)
		}
		j.reply <- joinReply{err: err}
	}
}

// failAllJoins answers every pending join of g with err.
func (c *Coordinator) failAllJoins(g *group, err error) {
	ids := make([]string, 0, len(g.joins))
	for id := range g.joins {
		ids = append(ids, id)
	}
	c.failJoins(g, ids, err)
}
