package group

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// Members that assign: Kafka's classic group protocol with client-side
// assignors. A member that joins with a protocol type and the protocols
// it supports (a Kafka consumer: type "consumer", protocols such as
// "range" or "cooperative-sticky", each with the member's subscription as
// metadata) belongs to a group whose leader assigns. The coordinator keeps
// each member's protocols, picks one that every member of the generation
// supports (Kafka's vote), hands the leader every member's metadata for
// it, stores the assignments the leader sends in its SyncGroup and hands
// each member its own. The metadata and assignments are opaque bytes here;
// the front door that decodes them (the Kafka listener, for the consumer
// protocol) also passes the topics and partitions they name, which
// Describe shows. A member without a protocol type (the HTTP API's) is
// assigned by the coordinator with the group's strategy; the two kinds do
// not share a generation: a member whose protocol type differs from the
// others', or that supports none of the protocols they all support, is
// refused with ErrInconsistentGroupProtocol, as Kafka refuses it.

// Protocol is a protocol a member supports (the core's vocabulary).
type Protocol = api.GroupProtocol

// MemberAssignment is what a leader assigns one member (the core's
// vocabulary).
type MemberAssignment = api.MemberAssignment

// cleanProtocols checks a joining member's protocol type and protocols
// and copies them: ErrInconsistentGroupProtocol for a protocol type
// without protocols (Kafka's answer), ErrInvalidArgument for protocols
// without a type or a name that is empty or too long. The topics of each
// are its subscription as far as the front door read it: names that
// cannot be topics are left out rather than refused, since the metadata is
// the members' own business.
func cleanProtocols(protocolType string, protocols []Protocol) ([]Protocol, error) {
	switch {
	case len(protocolType) > maxIDLen:
		return nil, fmt.Errorf("%w: protocol type is longer than %d bytes", ErrInvalidArgument, maxIDLen)
	case protocolType == "" && len(protocols) > 0:
		return nil, fmt.Errorf("%w: protocols without a protocol type", ErrInvalidArgument)
	case protocolType == "":
		return nil, nil
	case len(protocols) == 0:
		return nil, fmt.Errorf("%w: a member of protocol type %q supports no protocol", ErrInconsistentGroupProtocol, protocolType)
	}
	out := make([]Protocol, 0, len(protocols))
	for i, p := range protocols {
		if p.Name == "" || len(p.Name) > maxIDLen {
			return nil, fmt.Errorf("%w: protocols[%d] has no name or one longer than %d bytes", ErrInvalidArgument, i, maxIDLen)
		}
		out = append(out, Protocol{Name: p.Name, Metadata: slices.Clone(p.Metadata), Topics: subscription(p.Topics)})
	}
	return out, nil
}

// subscription is topics sorted, without duplicates and without names
// that cannot be topics; nil for none.
func subscription(topics []string) []string {
	var out []string
	for _, t := range topics {
		if t != "" && len(t) <= maxIDLen {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// protocolsOf is what member id currently supports: its waiting join's
// protocol type and protocols, else those of the generation it is in.
func (g *group) protocolsOf(id string) (string, []Protocol) {
	if j := g.joins[id]; j != nil {
		return j.protocolType, j.protocols
	}
	m := g.members[id]
	return m.protocolType, m.protocols
}

// compatible says whether a member (id, or a new one for "") may join
// with protocolType and protocols: every other member of the barrier has
// the same protocol type and, for members that assign, one of the
// member's protocols is supported by all of them (Kafka's
// supportsProtocols). By induction the members always share a protocol.
func (g *group) compatible(id, protocolType string, protocols []Protocol) bool {
	others := 0
	support := map[string]int{}
	for oid, m := range g.members {
		if oid == id || !m.inBarrier() {
			continue
		}
		pt, ps := g.protocolsOf(oid)
		if pt != protocolType {
			return false
		}
		others++
		seen := map[string]bool{}
		for _, p := range ps {
			if !seen[p.Name] {
				seen[p.Name] = true
				support[p.Name]++
			}
		}
	}
	if protocolType == "" || others == 0 {
		return true
	}
	return slices.ContainsFunc(protocols, func(p Protocol) bool { return support[p.Name] == others })
}

// selectProtocol is Kafka's vote over the members ids of a generation:
// the candidates are the protocols every member supports, each member
// votes for the first candidate in its own order of preference, and the
// protocol with the most votes wins (a tie goes to the name that sorts
// first, so that the choice never depends on map order). False when the
// members share no protocol.
func selectProtocol(ids []string, joins map[string]*pendingJoin) (string, bool) {
	support := map[string]int{}
	for _, id := range ids {
		seen := map[string]bool{}
		for _, p := range joins[id].protocols {
			if !seen[p.Name] {
				seen[p.Name] = true
				support[p.Name]++
			}
		}
	}
	votes := map[string]int{}
	for _, id := range ids {
		for _, p := range joins[id].protocols {
			if support[p.Name] == len(ids) {
				votes[p.Name]++
				break
			}
		}
	}
	best := ""
	for name, n := range votes {
		if best == "" || n > votes[best] || (n == votes[best] && name < best) {
			best = name
		}
	}
	return best, best != ""
}

// protocolsEqual says two lists of protocols are the same, in the same
// order (Kafka's MemberMetadata.matches): a member that rejoins with other
// protocols or metadata starts a rebalance.
func protocolsEqual(a, b []Protocol) bool {
	return slices.EqualFunc(a, b, func(x, y Protocol) bool {
		return x.Name == y.Name && bytes.Equal(x.Metadata, y.Metadata)
	})
}

// protocolNamed is the protocol of ps named name: the zero Protocol when
// there is none.
func protocolNamed(ps []Protocol, name string) Protocol {
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	return Protocol{}
}

// pendingSync is a SyncGroup of a member that assigns, waiting for the
// leader's assignment.
type pendingSync struct {
	reply chan syncReply // buffered: answered exactly once, never blocks
}

type syncReply struct {
	res SyncResult
	err error
}

// failSyncs answers every waiting SyncGroup with err.
func (g *group) failSyncs(err error) {
	for id, s := range g.syncs {
		delete(g.syncs, id)
		s.reply <- syncReply{err: err}
	}
}

// answerSyncs answers every waiting SyncGroup with its member's
// assignment, once the leader's is stored.
func (g *group) answerSyncs() {
	for id, s := range g.syncs {
		delete(g.syncs, id)
		if m := g.members[id]; m != nil {
			s.reply <- syncReply{res: g.syncResult(m)}
		} else {
			s.reply <- syncReply{err: fmt.Errorf("%w: member %q is not in group %q", ErrUnknownMember, id, g.id)}
		}
	}
}

// syncResult is what SyncGroup answers m.
func (g *group) syncResult(m *member) SyncResult {
	return SyncResult{ProtocolType: g.protocolType, Protocol: g.protocol,
		Assignment: cloneTopicPartitions(m.assignment), MemberAssignment: slices.Clone(m.memberAssignment)}
}

// storeAssignment journals the leader's assignments for the current
// generation: every member of the generation gets the bytes the leader
// gave it, or none when the leader left it out (as Kafka hands out); the
// partitions are kept only for the consumer protocol, whose assignments
// the front door decodes. Then every waiting SyncGroup is answered. If
// the journal fails, as in Kafka the waiting members get the error and the
// group rebalances so that they join again.
func (c *Coordinator) storeAssignment(ctx context.Context, g *group, assignments []MemberAssignment, now time.Time) error {
	// The assignment belongs to the whole generation, not to the leader's
	// request: a cancelled leader must not abort the write.
	ctx = context.WithoutCancel(ctx)
	given := make(map[string]MemberAssignment, len(assignments))
	for _, a := range assignments {
		given[a.MemberID] = a // the last one for a member wins, as in Kafka
	}
	rec := &record{Type: recSync, TS: toMs(now), Gen: g.generation}
	for _, id := range g.sortedMemberIDs() {
		if !g.members[id].protocol {
			continue
		}
		a := given[id]
		ra := recMemberAssignment{ID: id, Bytes: a.Assignment}
		if g.protocolType == api.ConsumerProtocolType {
			ra.Topics = toRecTPs(normalizeAssignment(a.Topics))
		}
		rec.MemberAssignments = append(rec.MemberAssignments, ra)
	}
	if err := c.write(ctx, g, rec); err != nil {
		g.failSyncs(err)
		c.beginRebalance(g, now)
		c.settle(ctx, g)
		return err
	}
	g.answerSyncs()
	return nil
}

// normalizeAssignment merges a decoded assignment into sorted topics with
// ascending, distinct, non-negative partitions, dropping names that
// cannot be topics.
func normalizeAssignment(tps []TopicPartitions) []TopicPartitions {
	got := map[string][]int32{}
	for _, tp := range tps {
		if tp.Topic == "" || len(tp.Topic) > maxIDLen {
			continue
		}
		for _, p := range tp.Partitions {
			if p >= 0 {
				got[tp.Topic] = append(got[tp.Topic], p)
			}
		}
	}
	out := toTopicPartitions(got)
	for i := range out {
		out[i].Partitions = slices.Compact(out[i].Partitions)
	}
	return out
}

// applyAssignment installs a leader's stored assignment (a sync record)
// if it is for the current generation of a group whose members assign.
func (c *Coordinator) applyAssignment(g *group, r *record) {
	if r.Gen != g.generation || g.protocolType == "" {
		return
	}
	given := make(map[string]recMemberAssignment, len(r.MemberAssignments))
	for _, a := range r.MemberAssignments {
		given[a.ID] = a
	}
	for id, m := range g.members {
		if m.protocol {
			m.memberAssignment = slices.Clone(given[id].Bytes)
			m.assignment = fromRecTPs(given[id].Topics)
		}
	}
	g.assigned = true
	if g.state == CompletingRebalance {
		g.state = Stable
	}
}
