package group

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"time"
)

// The original broker's assignment API: assignments computed for one topic
// over every member of a group (simple and protocol members alike) and
// saved per group and topic.

// Assign assigns the partitions of topic over the given member ids with the
// range strategy, saving nothing (POST /groups/assign). Ids are trimmed;
// duplicates count once.
func (c *Coordinator) Assign(topic string, memberIDs []string) ([]Assignment, error) {
	topic, n, err := c.topicSize(topic)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	subs := make([]Subscription, 0, len(memberIDs))
	for _, id := range memberIDs {
		id, err := cleanName("member id", id)
		if err != nil {
			return nil, err
		}
		if !seen[id] {
			seen[id] = true
			subs = append(subs, Subscription{MemberID: id, Topics: []string{topic}})
		}
	}
	if len(subs) == 0 {
		return nil, fmt.Errorf("%w: no members to assign %q to", ErrInvalidArgument, topic)
	}
	return AssignPartitions(StrategyRange, subs, map[string]int32{topic: n})
}

// Rebalance assigns topic over the group's current members, sorted by id,
// with the group's strategy, and saves the result (POST /groups/rebalance).
// ErrNoActiveMembers when the group has no members.
func (c *Coordinator) Rebalance(ctx context.Context, groupID, topic string) ([]Assignment, error) {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return nil, err
	}
	topic, n, err := c.topicSize(topic)
	if err != nil {
		return nil, err
	}
	g, err := c.lockGroup(gid, false)
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, fmt.Errorf("%w: group %q has no members", ErrNoActiveMembers, gid)
	}
	defer c.unlockGroup(g)
	return c.saveAssignment(ctx, g, topic, n, c.now())
}

// CleanupAndRebalance removes members with now − LastSeen > timeout, then
// assigns topic over the members that remain and saves the result (POST
// /groups/cleanup-and-rebalance). When no member remains the removal stands
// and it returns the removed members with ErrNoActiveMembers.
func (c *Coordinator) CleanupAndRebalance(ctx context.Context, groupID, topic string, timeout time.Duration) (removed []Member, assignments []Assignment, err error) {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return nil, nil, err
	}
	if timeout <= 0 {
		return nil, nil, fmt.Errorf("%w: timeout must be positive", ErrInvalidArgument)
	}
	topic, n, err := c.topicSize(topic)
	if err != nil {
		return nil, nil, err
	}
	g, err := c.lockGroup(gid, false)
	if err != nil {
		return nil, nil, err
	}
	if g == nil {
		return []Member{}, nil, fmt.Errorf("%w: group %q has no members", ErrNoActiveMembers, gid)
	}
	defer c.unlockGroup(g)
	now := c.now()
	removed, err = c.removeStale(ctx, g, now, time.Time{}, func(*member) time.Duration { return timeout })
	if err != nil {
		return nil, nil, err
	}
	assignments, err = c.saveAssignment(ctx, g, topic, n, now)
	return removed, assignments, err
}

// saveAssignment assigns a topic of n partitions over every member of g and
// journals it.
func (c *Coordinator) saveAssignment(ctx context.Context, g *group, topic string, n int32, now time.Time) ([]Assignment, error) {
	as, err := c.assignMembers(g, topic, n)
	if err != nil {
		return nil, err
	}
	if err := c.write(ctx, g, &record{Type: recAssign, TS: toMs(now), Topic: topic, Assignments: toRecAssigned(as)}); err != nil {
		return nil, err
	}
	return cloneAssignments(as), nil
}

func (c *Coordinator) assignMembers(g *group, topic string, n int32) ([]Assignment, error) {
	ids := g.sortedMemberIDs()
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: group %q has no members", ErrNoActiveMembers, g.id)
	}
	subs := make([]Subscription, 0, len(ids))
	for _, id := range ids {
		subs = append(subs, Subscription{MemberID: id, Topics: []string{topic}})
	}
	return AssignPartitions(g.strategy(), subs, map[string]int32{topic: n})
}

// SavedAssignment returns the saved assignment of a group and topic and
// whether there is one (GET /groups/assignments); an empty list when not.
func (c *Coordinator) SavedAssignment(groupID, topic string) ([]Assignment, bool, error) {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return nil, false, err
	}
	if topic, err = cleanName("topic", topic); err != nil {
		return nil, false, err
	}
	g, err := c.lockGroup(gid, false)
	if err != nil || g == nil {
		return []Assignment{}, false, err
	}
	defer c.unlockGroup(g)
	as, ok := g.saved[topic]
	if !ok {
		return []Assignment{}, false, nil
	}
	return cloneAssignments(as), true, nil
}

// AssignmentTopics lists, sorted, the topics a group has saved assignments
// for (the original store's Topics(group)).
func (c *Coordinator) AssignmentTopics(groupID string) ([]string, error) {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return nil, err
	}
	g, err := c.lockGroup(gid, false)
	if err != nil || g == nil {
		return []string{}, err
	}
	defer c.unlockGroup(g)
	return g.savedTopics(), nil
}

// DeleteAssignment deletes the saved assignment of a group and topic, and
// nothing else; deleting a missing one is not an error.
func (c *Coordinator) DeleteAssignment(ctx context.Context, groupID, topic string) error {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return err
	}
	if topic, err = cleanName("topic", topic); err != nil {
		return err
	}
	g, err := c.lockGroup(gid, false)
	if err != nil || g == nil {
		return err
	}
	defer c.unlockGroup(g)
	if _, ok := g.saved[topic]; !ok {
		return nil
	}
	return c.write(ctx, g, &record{Type: recUnassign, TS: toMs(c.now()), Topics: []string{topic}})
}

// DeleteAssignments deletes every saved assignment of a group (the original
// store's DeleteGroup).
func (c *Coordinator) DeleteAssignments(ctx context.Context, groupID string) error {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return err
	}
	g, err := c.lockGroup(gid, false)
	if err != nil || g == nil {
		return err
	}
	defer c.unlockGroup(g)
	if len(g.saved) == 0 {
		return nil
	}
	return c.write(ctx, g, &record{Type: recUnassign, TS: toMs(c.now()), Topics: g.savedTopics()})
}

func (g *group) savedTopics() []string {
	out := make([]string, 0, len(g.saved))
	for t := range g.saved {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// topicSize trims a topic name and returns its partition count.
func (c *Coordinator) topicSize(topic string) (string, int32, error) {
	topic, err := cleanName("topic", topic)
	if err != nil {
		return "", 0, err
	}
	n, ok := c.partitions.PartitionCount(topic)
	if !ok {
		return "", 0, fmt.Errorf("%w: topic %q does not exist", ErrUnknownTopic, topic)
	}
	return topic, n, nil
}

// rebalanceSaved recomputes a group's saved assignments after members were
// removed, as the original broker's background pass does: deleted when no
// member is left, otherwise recomputed for every topic that still exists
// (a saved topic that does not exist now is skipped, not deleted).
func (c *Coordinator) rebalanceSaved(ctx context.Context, g *group, now time.Time) error {
	topics := g.savedTopics()
	if len(topics) == 0 {
		return nil
	}
	if len(g.members) == 0 {
		return c.write(ctx, g, &record{Type: recUnassign, TS: toMs(now), Topics: topics})
	}
	for _, t := range topics {
		n, ok := c.partitions.PartitionCount(t)
		if !ok {
			continue
		}
		as, err := c.assignMembers(g, t, n)
		if err != nil {
			return err
		}
		if reflect.DeepEqual(as, g.saved[t]) {
			continue
		}
		if err := c.write(ctx, g, &record{Type: recAssign, TS: toMs(now), Topic: t, Assignments: toRecAssigned(as)}); err != nil {
			return err
		}
	}
	return nil
}
