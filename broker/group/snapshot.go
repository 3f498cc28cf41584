package group

import "sort"

// Snapshot returns records that recreate the current state of every group
// when replayed into an empty coordinator, so the owner can compact the
// journal: the snapshot replaces every record appended before Snapshot was
// called, and records appended since then are kept after it. (Groups are
// captured one by one while the coordinator serves, so some of those later
// records may already be in the snapshot; replaying a record onto a state
// that holds it changes nothing, except that a member's last-seen time may
// go back to that record's time until its next heartbeat.) Joins that
// are still waiting are not part of it (their clients join again when the
// coordinator changes); everything else is, including last-seen times newer
// than the journal's and a rebalance that is pending because of a journaled
// change. Records come grouped by group, groups sorted.
func (c *Coordinator) Snapshot() [][]byte {
	var out [][]byte
	for _, id := range c.groupIDs() {
		g, err := c.lockGroup(id, false)
		if err != nil || g == nil {
			continue
		}
		out = append(out, snapshotGroup(g)...)
		c.unlockGroup(g)
	}
	return out
}

func snapshotGroup(g *group) [][]byte {
	var recs []*record
	if g.config != nil {
		recs = append(recs, &record{Type: recConfig, SessionMs: durMs(g.config.SessionTimeout), Strategy: g.config.AssignmentStrategy})
	}
	gen := &record{Type: recGen, Gen: g.generation, Leader: g.leader}
	for _, id := range g.sortedMemberIDs() {
		m := g.members[id]
		switch {
		case m.transient:
			// A join in progress: not state yet.
		case m.protocol:
			gen.Members = append(gen.Members, genMember{
				ID: id, ClientID: m.clientID, Topics: m.topics,
				SessionMs: durMs(m.sessionTimeout), RebalanceMs: durMs(m.rebalanceTimeout),
				Seen: toMs(m.lastSeen), Assigned: toRecTPs(m.assignment),
			})
		default:
			recs = append(recs, &record{Type: recJoin, TS: toMs(m.lastSeen), ID: id})
		}
	}
	if g.rebalancePending {
		gen.Rebalance = toMs(g.rebalanceDeadline)
		if gen.Rebalance == 0 {
			gen.Rebalance = 1 // the epoch itself: still "pending"
		}
	}
	if g.generation != 0 || len(gen.Members) > 0 || g.rebalancePending {
		recs = append(recs, gen)
	}
	topics := make([]string, 0, len(g.saved))
	for t := range g.saved {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		recs = append(recs, &record{Type: recAssign, Topic: t, Assignments: toRecAssigned(g.saved[t])})
	}
	if len(g.offsets) > 0 {
		tps := make([]TopicPartition, 0, len(g.offsets))
		for tp := range g.offsets {
			tps = append(tps, tp)
		}
		sortTPs(tps)
		o := &record{Type: recOffsets}
		for _, tp := range tps {
			co := g.offsets[tp]
			o.Offsets = append(o.Offsets, recOffset{Topic: tp.Topic, Partition: tp.Partition, Offset: co.offset, Metadata: co.metadata})
		}
		recs = append(recs, o)
	}
	out := make([][]byte, 0, len(recs))
	for _, r := range recs {
		r.V, r.Group = recordVersion, g.id
		out = append(out, encodeRecord(r))
	}
	return out
}

func sortTPs(tps []TopicPartition) {
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
}
