package group

import (
	"context"
	"fmt"
	"time"
)

// The original single-node broker's membership: simple members, registered
// and seen, not part of a generation (see the package doc). Every call
// trims and validates the group and member ids (ErrInvalidArgument when
// empty). Such a member leaves through LeaveGroup, as any member does, and
// is listed by DescribeMembers.

// Join registers a simple member, seen now. Joining again changes nothing.
func (c *Coordinator) Join(ctx context.Context, groupID, memberID string) error {
	gid, mid, err := cleanGroupMember(groupID, memberID)
	if err != nil {
		return err
	}
	g, err := c.lockGroup(gid, true)
	if err != nil {
		return err
	}
	defer c.unlockGroup(g)
	if g.members[mid] != nil {
		return nil
	}
	return c.write(ctx, g, &record{Type: recJoin, TS: toMs(c.now()), ID: mid})
}

// Heartbeat records that a member was seen now, registering it as a simple
// member if it is missing. Every such heartbeat is journaled, so last-seen
// times survive a restart exactly.
func (c *Coordinator) Heartbeat(ctx context.Context, groupID, memberID string) error {
	gid, mid, err := cleanGroupMember(groupID, memberID)
	if err != nil {
		return err
	}
	g, err := c.lockGroup(gid, true)
	if err != nil {
		return err
	}
	defer c.unlockGroup(g)
	if m := g.members[mid]; m != nil && !m.transient {
		return c.touch(ctx, g, m, true)
	}
	return c.write(ctx, g, &record{Type: recSeen, TS: toMs(c.now()), ID: mid})
}

// StaleMembers lists, sorted, the members with now − LastSeen > timeout,
// changing nothing. Members waiting in a join are never stale.
func (c *Coordinator) StaleMembers(groupID string, timeout time.Duration) ([]Member, error) {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("%w: timeout must be positive", ErrInvalidArgument)
	}
	out := []Member{}
	g, err := c.lockGroup(gid, false)
	if err != nil || g == nil {
		return out, err
	}
	defer c.unlockGroup(g)
	now := c.now()
	for _, id := range g.staleMembers(now, time.Time{}, func(*member) time.Duration { return timeout }) {
		out = append(out, g.members[id].public())
	}
	return out, nil
}

// RemoveStaleMembers removes the members StaleMembers would list and returns
// them sorted. It does not touch saved assignments (the original API's
// rule); removing a protocol member starts a rebalance of the generation.
func (c *Coordinator) RemoveStaleMembers(ctx context.Context, groupID string, timeout time.Duration) ([]Member, error) {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("%w: timeout must be positive", ErrInvalidArgument)
	}
	g, err := c.lockGroup(gid, false)
	if err != nil || g == nil {
		return []Member{}, err
	}
	defer c.unlockGroup(g)
	removed, err := c.removeStale(ctx, g, c.now(), time.Time{}, func(*member) time.Duration { return timeout })
	if err != nil {
		return nil, err
	}
	return removed, nil
}

// staleMembers returns, sorted, the ids of members not seen within their
// timeout and not waiting in a join or for their leader's assignment. A
// member's time runs from when it was last seen, or from since when that
// is later (see Coordinator.Loaded).
func (g *group) staleMembers(now, since time.Time, timeout func(*member) time.Duration) []string {
	var ids []string
	for _, id := range g.sortedMemberIDs() {
		m := g.members[id]
		seen := m.lastSeen
		if seen.Before(since) {
			seen = since
		}
		if g.joins[id] == nil && g.syncs[id] == nil && now.Sub(seen) > timeout(m) {
			ids = append(ids, id)
		}
	}
	return ids
}

// removeStale removes stale members (see staleMembers) and returns them,
// sorted.
func (c *Coordinator) removeStale(ctx context.Context, g *group, now, since time.Time, timeout func(*member) time.Duration) ([]Member, error) {
	ids := g.staleMembers(now, since, timeout)
	removed := make([]Member, 0, len(ids))
	for _, id := range ids {
		removed = append(removed, g.members[id].public())
	}
	if len(ids) == 0 {
		return removed, nil
	}
	if err := c.removeMembers(ctx, g, ids, now); err != nil {
		return nil, err
	}
	return removed, nil
}

// removeMembers removes members in one journal record. Their waiting joins
// fail; a protocol member's removal starts a rebalance.
func (c *Coordinator) removeMembers(ctx context.Context, g *group, ids []string, now time.Time) error {
	var stored []string
	for _, id := range ids {
		if m := g.members[id]; m != nil && !m.transient {
			stored = append(stored, id)
		}
	}
	if len(stored) > 0 {
		if err := c.write(ctx, g, &record{Type: recLeave, TS: toMs(now), IDs: stored}); err != nil {
			return err
		}
	}
	c.failJoins(g, ids, fmt.Errorf("%w: member left group %q", ErrUnknownMember, g.id))
	c.settle(ctx, g)
	return nil
}

// touch records that m was seen now. With always (the original API), the
// time is journaled; otherwise (protocol heartbeats, every few seconds) it
// is journaled only once a third of the member's session has passed since
// the journaled time, which bounds journal traffic while keeping a restarted
// coordinator from expiring a live member.
func (c *Coordinator) touch(ctx context.Context, g *group, m *member, always bool) error {
	now := c.now()
	if !always && now.Sub(m.journaledSeen) < c.memberSessionTimeout(g, m)/3 {
		if now.After(m.lastSeen) {
			m.lastSeen = now
		}
		return nil
	}
	if now.Equal(m.lastSeen) && now.Equal(m.journaledSeen) {
		return nil
	}
	return c.write(ctx, g, &record{Type: recSeen, TS: toMs(now), ID: m.id})
}

// memberSessionTimeout is how long m may go unseen: the group's configured
// session timeout when it has one (the operator's ConsumerGroup enforces
// it), else the timeout the member asked for when it joined, else the
// coordinator's default.
func (c *Coordinator) memberSessionTimeout(g *group, m *member) time.Duration {
	if g.config != nil && g.config.SessionTimeout > 0 {
		return g.config.SessionTimeout
	}
	if m.sessionTimeout > 0 {
		return m.sessionTimeout
	}
	return c.sessionTimeout
}

// groupSessionTimeout is the group's configured session timeout or the default.
func (c *Coordinator) groupSessionTimeout(g *group) time.Duration {
	if g.config != nil && g.config.SessionTimeout > 0 {
		return g.config.SessionTimeout
	}
	return c.sessionTimeout
}
