package group

import (
	"fmt"
	"slices"
	"time"
)

// apply changes g as record r says. It is the only code that changes
// persisted state, used both after a live journal append and by Replay, so
// that a replayed coordinator holds what the live one held. It never fails:
// fields it cannot use are ignored, so that a damaged or newer record never
// stops a coordinator from loading.
func (c *Coordinator) apply(g *group, r *record) {
	ts := fromMs(r.TS)
	switch r.Type {
	case recJoin:
		if r.ID != "" && g.members[r.ID] == nil {
			g.members[r.ID] = &member{id: r.ID, lastSeen: ts, journaledSeen: ts}
		}
	case recSeen:
		if r.ID == "" {
			return
		}
		m := g.members[r.ID]
		if m == nil {
			m = &member{id: r.ID}
			g.members[r.ID] = m
		}
		m.transient = false
		m.lastSeen, m.journaledSeen = ts, ts
	case recLeave:
		rebalance := false
		for _, id := range r.IDs {
			if m := g.members[id]; m != nil {
				rebalance = rebalance || m.protocol
				delete(g.members, id)
				delete(g.synced, id)
			}
		}
		if rebalance {
			c.requireRebalance(g, ts)
		}
	case recGen:
		c.applyGeneration(g, r)
	case recSync:
		c.applyAssignment(g, r)
	case recAssign:
		if r.Topic != "" {
			g.saved[r.Topic] = fromRecAssigned(r.Assignments)
		}
	case recUnassign:
		for _, t := range r.Topics {
			delete(g.saved, t)
		}
	case recOffsets:
		for _, o := range r.Offsets {
			tp := TopicPartition{o.Topic, o.Partition}
			switch {
			case o.Topic == "" || o.Partition < 0:
			case o.Offset < 0: // a Kafka client's "none" (CommitOffsets)
				delete(g.offsets, tp)
			default:
				g.offsets[tp] = committed{offset: o.Offset, metadata: o.Metadata}
			}
		}
	case recForget:
		for _, o := range r.Offsets {
			delete(g.offsets, TopicPartition{o.Topic, o.Partition})
		}
	case recConfig:
		strategy := r.Strategy
		if !ValidStrategy(strategy) {
			strategy = "" // a strategy this version does not know: the default
		}
		before := g.strategy()
		g.config = &GroupConfig{SessionTimeout: msDur(r.SessionMs), AssignmentStrategy: strategy}
		if g.strategy() != before && g.hasProtocolMembers() {
			c.requireRebalance(g, ts)
		}
	case recDelete:
		clear(g.members)
		clear(g.saved)
		clear(g.offsets)
		clear(g.synced)
		g.generation, g.leader, g.config = 0, "", nil
		g.protocolType, g.protocol, g.assigned = "", "", false
		g.rebalancePending, g.rebalanceDeadline = false, time.Time{}
		g.state = Empty
		g.epoch++
		g.stopTimer()
	}
	// Any other type comes from a newer version: skipped.
}

// applyGeneration installs a completed generation: its members become the
// group's protocol members, replacing the previous ones; simple members stay.
func (c *Coordinator) applyGeneration(g *group, r *record) {
	listed := make(map[string]bool, len(r.Members))
	for _, gm := range r.Members {
		if gm.ID == "" || listed[gm.ID] {
			continue
		}
		listed[gm.ID] = true
		var topics []string
		if len(gm.Topics) > 0 {
			topics = slices.Clone(gm.Topics)
			slices.Sort(topics)
		}
		seen := fromMs(gm.Seen)
		m := &member{
			id:               gm.ID,
			protocol:         true,
			clientID:         gm.ClientID,
			topics:           slices.Compact(topics),
			sessionTimeout:   msDur(gm.SessionMs),
			rebalanceTimeout: msDur(gm.RebalanceMs),
			lastSeen:         seen,
			journaledSeen:    seen,
			assignment:       fromRecTPs(gm.Assigned),
		}
		if r.ProtocolType != "" {
			m.protocolType, m.protocols = r.ProtocolType, fromRecProtocols(gm.Protocols)
			m.memberAssignment = slices.Clone(gm.Bytes)
		}
		g.members[gm.ID] = m
	}
	for id, m := range g.members {
		if m.protocol && !listed[id] {
			delete(g.members, id)
		}
	}
	g.generation = r.Gen
	g.leader = r.Leader
	g.protocolType, g.protocol = r.ProtocolType, r.Protocol
	// A live generation of members that assign waits for the leader's
	// assignment (a sync record); a snapshot says whether it came.
	g.assigned = r.ProtocolType == "" || r.Assigned
	clear(g.synced)
	g.failSyncs(fmt.Errorf("%w: group %q is at generation %d", ErrRebalanceInProgress, g.id, r.Gen))
	g.epoch++
	g.stopTimer()
	if r.Rebalance != 0 {
		// A snapshot of a group waiting for a rebalance.
		g.rebalancePending = true
		g.rebalanceDeadline = fromMs(r.Rebalance)
		g.state = PreparingRebalance
		return
	}
	g.rebalancePending, g.rebalanceDeadline = false, time.Time{}
	switch {
	case len(listed) == 0:
		g.state = Empty
	case !g.assigned:
		g.state = CompletingRebalance
	default:
		g.state = Stable
	}
}

// requireRebalance records that a journaled change needs a new generation.
func (c *Coordinator) requireRebalance(g *group, now time.Time) {
	g.rebalancePending = true
	c.beginRebalance(g, now)
}
