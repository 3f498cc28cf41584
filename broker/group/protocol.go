package group

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// JoinRequest asks to join a group's next generation
// (POST /groups/{g}/join).
type JoinRequest struct {
	Group string
	// MemberID is empty for a new member, which gets an id; otherwise the id
	// the coordinator gave it (or a simple member's id, which promotes it).
	MemberID string
	ClientID string
	// Topics is the subscription; the assignment covers those that exist.
	Topics []string
	// SessionTimeout overrides the group's stale timeout for this member.
	SessionTimeout time.Duration
	// RebalanceTimeout bounds how long a rebalance waits for the others.
	RebalanceTimeout time.Duration
	// ProtocolType and Protocols make a member that assigns (see
	// assigners.go): Topics is then ignored, each protocol carries the
	// subscription as the front door read it.
	ProtocolType string
	Protocols    []Protocol
}

// JoinResult answers a join: the generation the member is part of and,
// for members that assign, the protocol chosen for it. Members carries
// each member's metadata for that protocol.
type JoinResult struct {
	Group        string
	MemberID     string
	Generation   int32
	Leader       string
	Members      []JoinedMember
	ProtocolType string
	Protocol     string
}

// JoinedMember is a member of a generation and its subscription (the
// core's vocabulary).
type JoinedMember = api.JoinedMember

// JoinGroup joins the generation protocol. It waits until every protocol
// member has rejoined or the rebalance timeout expires (members that did
// not rejoin are removed), then the generation increments, the group's
// strategy assigns the partitions (for members that assign, a protocol is
// chosen instead), and every waiting join returns. A member of a settled
// generation that rejoins with an unchanged subscription (protocols) and
// is not the leader gets the current generation at once, as in Kafka; the
// leader rejoining, or a changed subscription, starts a rebalance. A
// member whose protocol type differs from the other members', or that
// supports none of the protocols they all support, is refused with
// ErrInconsistentGroupProtocol. If ctx ends first, the join is withdrawn
// (a member it created is removed) and ctx's error returned.
func (c *Coordinator) JoinGroup(ctx context.Context, req JoinRequest) (JoinResult, error) {
	gid, err := cleanName("group", req.Group)
	if err != nil {
		return JoinResult{}, err
	}
	protocols, err := cleanProtocols(req.ProtocolType, req.Protocols)
	if err != nil {
		return JoinResult{}, err
	}
	var topics []string
	if req.ProtocolType == "" {
		topics, err = cleanTopics(req.Topics)
	} else {
		topics = protocols[0].Topics
	}
	if err != nil {
		return JoinResult{}, err
	}
	if err := cleanTimeout("session timeout", req.SessionTimeout); err != nil {
		return JoinResult{}, err
	}
	if err := cleanTimeout("rebalance timeout", req.RebalanceTimeout); err != nil {
		return JoinResult{}, err
	}
	if len(req.MemberID) > maxIDLen || len(req.ClientID) > maxIDLen {
		return JoinResult{}, fmt.Errorf("%w: member_id or client_id is longer than %d bytes", ErrInvalidArgument, maxIDLen)
	}

	g, err := c.lockGroup(gid, true)
	if err != nil {
		return JoinResult{}, err
	}
	now := c.now()
	mid := strings.TrimSpace(req.MemberID)
	if !g.compatible(mid, req.ProtocolType, protocols) {
		c.unlockGroup(g)
		return JoinResult{}, fmt.Errorf("%w: the members of group %q have another protocol type than %q or support none of %s",
			ErrInconsistentGroupProtocol, gid, req.ProtocolType, protocolNames(protocols))
	}
	var m *member
	created := mid == ""
	if created {
		for mid = newMemberID(req.ClientID); g.members[mid] != nil; mid = newMemberID(req.ClientID) {
		}
		m = &member{id: mid, transient: true, lastSeen: now}
		g.members[mid] = m
	} else if m = g.members[mid]; m == nil || (m.transient && g.joins[mid] == nil) {
		c.unlockGroup(g)
		return JoinResult{}, fmt.Errorf("%w: member %q is not in group %q", ErrUnknownMember, mid, gid)
	}
	m.lastSeen = now

	settled := g.state == Stable || g.state == CompletingRebalance
	// A member that assigns is unchanged when its protocols and their
	// metadata are (its topics are the chosen protocol's, not the first's).
	unchanged := m.protocolType == req.ProtocolType && protocolsEqual(m.protocols, protocols) &&
		(req.ProtocolType != "" || slices.Equal(m.topics, topics))
	if settled && m.protocol && unchanged && (g.state == CompletingRebalance || g.leader != mid) {
		res := g.joinResult(mid)
		c.unlockGroup(g)
		return res, nil
	}

	j := &pendingJoin{
		clientID: req.ClientID, topics: topics, protocolType: req.ProtocolType, protocols: protocols,
		sessionTimeout: req.SessionTimeout, rebalanceTimeout: req.RebalanceTimeout,
		reply: make(chan joinReply, 1),
	}
	if old := g.joins[mid]; old != nil {
		// The same member joined again while waiting: the newer join wins.
		old.reply <- joinReply{err: fmt.Errorf("%w: member %q joined again", ErrRebalanceInProgress, mid)}
	}
	fromEmpty := g.state == Empty
	g.joins[mid] = j
	c.beginRebalance(g, now)
	if fromEmpty && req.ProtocolType != "" && c.initialDelay > 0 {
		c.startInitialDelay(g, now)
	} else if created && g.delaying() {
		g.newJoiner = true
	}
	c.settle(ctx, g)
	c.unlockGroup(g)

	select {
	case r := <-j.reply:
		return r.res, r.err
	case <-c.life.Done():
		select {
		case r := <-j.reply: // answered just before the close
			return r.res, r.err
		default:
			return JoinResult{}, fmt.Errorf("%w: the coordinator closed during the rebalance", ErrCoordinatorNotAvailable)
		}
	case <-ctx.Done():
	}
	if c.relock(g) {
		if !g.removed && g.joins[mid] == j {
			delete(g.joins, mid)
			if m := g.members[mid]; m != nil && m.transient {
				delete(g.members, mid)
			}
			c.settle(ctx, g)
		}
		c.unlockGroup(g)
	}
	select {
	case r := <-j.reply: // answered while we were giving up
		return r.res, r.err
	default:
		return JoinResult{}, ctx.Err()
	}
}

// SyncGroup returns the member's assignment for generation in a group the
// coordinator assigns (Sync without a leader's assignment).
func (c *Coordinator) SyncGroup(ctx context.Context, groupID, memberID string, generation int32) ([]TopicPartitions, error) {
	res, err := c.Sync(ctx, SyncRequest{Group: groupID, MemberID: memberID, Generation: generation})
	return res.Assignment, err
}

// SyncRequest asks for a member's assignment in its generation; the
// leader of a group whose members assign sends every member's.
// ProtocolType and Protocol, when set, must be the group's.
type SyncRequest struct {
	Group        string
	MemberID     string
	Generation   int32
	ProtocolType string
	Protocol     string
	Assignments  []MemberAssignment
}

// SyncResult is a member's assignment: in a group whose members assign,
// the bytes its leader gave it (MemberAssignment) and the partitions they
// name, as far as the front door read them.
type SyncResult struct {
	ProtocolType     string
	Protocol         string
	Assignment       []TopicPartitions
	MemberAssignment []byte
}

// Sync answers a member's assignment in its generation. In a group the
// coordinator assigns, the assignment was computed when the generation
// completed, and Sync never waits; the group is Stable once every member
// has it. In a group whose members assign, the leader's Sync stores the
// assignments it carries (the group is then Stable) and every member gets
// its own; a member that syncs before the leader waits for it, until the
// group rebalances (ErrRebalanceInProgress), the coordinator closes or ctx
// ends, as in Kafka.
func (c *Coordinator) Sync(ctx context.Context, req SyncRequest) (SyncResult, error) {
	g, m, err := c.lockGenerationMember(req.Group, req.MemberID, req.Generation)
	if err != nil {
		return SyncResult{}, err
	}
	if (req.ProtocolType != "" && req.ProtocolType != g.protocolType) || (req.Protocol != "" && req.Protocol != g.protocol) {
		c.unlockGroup(g)
		return SyncResult{}, fmt.Errorf("%w: group %q has protocol type %q and protocol %q, not %q and %q",
			ErrInconsistentGroupProtocol, g.id, g.protocolType, g.protocol, req.ProtocolType, req.Protocol)
	}
	now := c.now()
	m.lastSeen = now
	if g.protocolType == "" {
		defer c.unlockGroup(g)
		g.synced[m.id] = true
		if g.state == CompletingRebalance && g.allSynced() {
			g.state = Stable
		}
		return g.syncResult(m), nil
	}
	if !g.assigned && m.id == g.leader {
		if err := c.storeAssignment(ctx, g, req.Assignments, now); err != nil {
			c.unlockGroup(g)
			return SyncResult{}, err
		}
	}
	if g.assigned {
		defer c.unlockGroup(g)
		return g.syncResult(m), nil
	}

	// A member before its leader: wait for the leader's assignment.
	mid := m.id
	s := &pendingSync{reply: make(chan syncReply, 1)}
	if old := g.syncs[mid]; old != nil {
		old.reply <- syncReply{err: fmt.Errorf("%w: member %q synced again", ErrRebalanceInProgress, mid)}
	}
	g.syncs[mid] = s
	c.unlockGroup(g)
	select {
	case r := <-s.reply:
		return r.res, r.err
	case <-c.life.Done():
		select {
		case r := <-s.reply: // answered just before the close
			return r.res, r.err
		default:
			return SyncResult{}, fmt.Errorf("%w: the coordinator closed before the leader's assignment", ErrCoordinatorNotAvailable)
		}
	case <-ctx.Done():
	}
	if c.relock(g) {
		if !g.removed && g.syncs[mid] == s {
			delete(g.syncs, mid)
		}
		c.unlockGroup(g)
	}
	select {
	case r := <-s.reply: // answered while we were giving up
		return r.res, r.err
	default:
		return SyncResult{}, ctx.Err()
	}
}

// HeartbeatGroup keeps a protocol member's session alive. During a
// rebalance it answers ErrRebalanceInProgress (the member must join again),
// after refreshing the session so that the member is not expired meanwhile.
func (c *Coordinator) HeartbeatGroup(ctx context.Context, groupID, memberID string, generation int32) error {
	g, m, err := c.lockMember(groupID, memberID)
	if err != nil {
		return err
	}
	defer c.unlockGroup(g)
	if !m.protocol || generation != g.generation {
		return illegalGeneration(g, m, generation)
	}
	if err := c.touch(ctx, g, m, false); err != nil {
		return err
	}
	if g.state == PreparingRebalance {
		return fmt.Errorf("%w: group %q is rebalancing", ErrRebalanceInProgress, g.id)
	}
	return nil
}

// LeaveGroup removes a member of either kind, which starts a rebalance if
// it was a protocol member; a member still waiting in its first join
// leaves that join. An unknown member is ErrUnknownMember (the original
// API, whose leave of a missing member succeeds, answers that as done).
func (c *Coordinator) LeaveGroup(ctx context.Context, groupID, memberID string) error {
	gid, mid, err := cleanGroupMember(groupID, memberID)
	if err != nil {
		return err
	}
	g, err := c.lockGroup(gid, false)
	if err != nil {
		return err
	}
	if g == nil || g.members[mid] == nil {
		if g != nil {
			c.unlockGroup(g)
		}
		return fmt.Errorf("%w: member %q is not in group %q", ErrUnknownMember, mid, gid)
	}
	defer c.unlockGroup(g)
	return c.removeMembers(ctx, g, []string{mid}, c.now())
}

// lockMember locks the group of a known, non-transient member.
func (c *Coordinator) lockMember(groupID, memberID string) (*group, *member, error) {
	gid, mid, err := cleanGroupMember(groupID, memberID)
	if err != nil {
		return nil, nil, err
	}
	g, err := c.lockGroup(gid, false)
	if err != nil {
		return nil, nil, err
	}
	if g != nil {
		if m := g.members[mid]; m != nil && !m.transient {
			return g, m, nil
		}
		c.unlockGroup(g)
	}
	return nil, nil, fmt.Errorf("%w: member %q is not in group %q", ErrUnknownMember, mid, gid)
}

// lockGenerationMember locks the group of a member of the current,
// settled generation.
func (c *Coordinator) lockGenerationMember(groupID, memberID string, generation int32) (*group, *member, error) {
	g, m, err := c.lockMember(groupID, memberID)
	if err != nil {
		return nil, nil, err
	}
	if !m.protocol || generation != g.generation {
		err = illegalGeneration(g, m, generation)
	} else if g.state == PreparingRebalance {
		err = fmt.Errorf("%w: group %q is rebalancing", ErrRebalanceInProgress, g.id)
	}
	if err != nil {
		c.unlockGroup(g)
		return nil, nil, err
	}
	return g, m, nil
}

func illegalGeneration(g *group, m *member, generation int32) error {
	if !m.protocol {
		return fmt.Errorf("%w: member %q of group %q has not joined a generation", ErrIllegalGeneration, m.id, g.id)
	}
	return fmt.Errorf("%w: group %q is at generation %d, not %d", ErrIllegalGeneration, g.id, g.generation, generation)
}

// joinResult is what a join of member id into the current generation
// answers.
func (g *group) joinResult(id string) JoinResult {
	return JoinResult{Group: g.id, MemberID: id, Generation: g.generation, Leader: g.leader,
		Members: g.joinedMembers(), ProtocolType: g.protocolType, Protocol: g.protocol}
}

// joinedMembers lists the current generation's members, sorted; members
// that assign with their metadata for the chosen protocol.
func (g *group) joinedMembers() []JoinedMember {
	out := []JoinedMember{}
	for _, id := range g.sortedMemberIDs() {
		if m := g.members[id]; m.protocol {
			jm := JoinedMember{ID: id, Topics: slices.Clone(m.topics)}
			if jm.Topics == nil {
				jm.Topics = []string{}
			}
			if g.protocolType != "" {
				jm.Metadata = slices.Clone(protocolNamed(m.protocols, g.protocol).Metadata)
			}
			out = append(out, jm)
		}
	}
	return out
}

// protocolNames lists the names of ps, for messages.
func protocolNames(ps []Protocol) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// allSynced says every member of the generation fetched its assignment.
func (g *group) allSynced() bool {
	for id, m := range g.members {
		if m.protocol && !g.synced[id] {
			return false
		}
	}
	return true
}
