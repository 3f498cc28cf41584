package group

import (
	"context"
	"fmt"
	"sort"
)

// Snapshot returns records that recreate the current state of every group
// when replayed into an empty coordinator. Groups are captured one by one
// while the coordinator serves; to compact a journal that keeps taking
// writes, use WriteSnapshot, which appends each group's records before the
// group can change again. Joins that
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

// BatchJournal is a Journal that can also store several records of one
// group as a single write, all or nothing (the broker's journal appends them
// as one batch). WriteSnapshot uses it when the journal has it.
type BatchJournal interface {
	Journal
	AppendBatch(ctx context.Context, group string, records [][]byte) error
}

// WriteSnapshot appends Snapshot's records to the journal itself, one group
// at a time, holding each group's lock while its records are written, and
// returns how many groups it wrote. Nothing can change a group while its
// snapshot is written, so every record of the group before the snapshot in
// the journal is reflected in it, and replaying the snapshot over any of
// those records gives exactly the state it captured (snapshot records set
// what they describe: the generation and its members, each simple member
// with its last-seen time, each saved assignment and committed offset, the
// config). The journal's owner may therefore drop every record appended
// before WriteSnapshot was called: replaying what remains rebuilds the
// current state. Groups that are empty (deleted, or every member gone with
// nothing committed) have no records and need none. WriteSnapshot stops at
// the first failed append; the earlier records must then be kept.
func (c *Coordinator) WriteSnapshot(ctx context.Context) (int, error) {
	ctx, stop := c.bound(ctx)
	defer stop()
	bj, batched := c.journal.(BatchJournal)
	n := 0
	for _, id := range c.groupIDs() {
		g, err := c.lockGroup(id, false)
		if err != nil {
			return n, err
		}
		if g == nil {
			continue
		}
		recs := snapshotGroup(g)
		if len(recs) > 0 {
			if batched {
				err = bj.AppendBatch(ctx, id, recs)
			} else {
				for _, r := range recs {
					if err = c.journal.Append(ctx, id, r); err != nil {
						break
					}
				}
			}
		}
		c.unlockGroup(g)
		if err != nil {
			return n, fmt.Errorf("writing the snapshot of group %q: %w", id, err)
		}
		if len(recs) > 0 {
			n++
		}
	}
	return n, nil
}

func snapshotGroup(g *group) [][]byte {
	var recs []*record
	if g.config != nil {
		recs = append(recs, &record{Type: recConfig, SessionMs: durMs(g.config.SessionTimeout), Strategy: g.config.AssignmentStrategy})
	}
	gen := &record{Type: recGen, Gen: g.generation, Leader: g.leader, ProtocolType: g.protocolType, Protocol: g.protocol}
	gen.Assigned = g.protocolType != "" && g.assigned
	for _, id := range g.sortedMemberIDs() {
		m := g.members[id]
		switch {
		case m.transient:
			// A join in progress: not state yet.
		case m.protocol:
			gm := genMember{
				ID: id, ClientID: m.clientID, Topics: m.topics,
				SessionMs: durMs(m.sessionTimeout), RebalanceMs: durMs(m.rebalanceTimeout),
				Seen: toMs(m.lastSeen), Assigned: toRecTPs(m.assignment),
			}
			if g.protocolType != "" {
				gm.Protocols, gm.Bytes = toRecProtocols(m.protocols), m.memberAssignment
			}
			gen.Members = append(gen.Members, gm)
		default:
			// "seen" rather than "join": it sets the last-seen time even
			// over a member that replayed records already created.
			recs = append(recs, &record{Type: recSeen, TS: toMs(m.lastSeen), ID: id})
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
