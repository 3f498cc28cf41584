package core

import (
	"context"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/group"
)

// The requests only the original group API makes: simple members
// registered and seen, stale members by a timeout, and assignments saved
// per group and topic. Leaving, listing members, and committing and
// reading offsets are the generation protocol's requests (groups.go).

var (
	seenMemberOp = newGroupOp("seen", func(r api.SeenMember) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.SeenMember) (struct{}, error) {
			if r.Refresh {
				return struct{}{}, c.Heartbeat(ctx, r.Group, r.MemberID)
			}
			return struct{}{}, c.Join(ctx, r.Group, r.MemberID)
		})
	staleMembersOp = newGroupOp("stale", func(r api.StaleMembersRequest) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.StaleMembersRequest) ([]api.Member, error) {
			var ms []group.Member
			var err error
			if r.Remove {
				ms, err = c.RemoveStaleMembers(ctx, r.Group, r.Timeout)
			} else {
				ms, err = c.StaleMembers(r.Group, r.Timeout)
			}
			return apiMembers(ms), err
		})
	saveAssignmentOp = newGroupOp("save-assignment", func(r api.SaveAssignmentRequest) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.SaveAssignmentRequest) (api.SaveAssignmentResult, error) {
			if !r.RemoveStale {
				as, err := c.Rebalance(ctx, r.Group, r.Topic)
				return api.SaveAssignmentResult{Removed: []api.Member{}, Assignments: nonNilAssignments(as)}, err
			}
			removed, as, err := c.CleanupAndRebalance(ctx, r.Group, r.Topic, r.StaleTimeout)
			return api.SaveAssignmentResult{Removed: apiMembers(removed), Assignments: nonNilAssignments(as)}, err
		})
	savedAssignmentOp = newGroupOp("saved-assignment", func(r api.GroupTopic) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.GroupTopic) (api.SavedAssignment, error) {
			as, found, err := c.SavedAssignment(r.Group, r.Topic)
			return api.SavedAssignment{Found: found, Assignments: nonNilAssignments(as)}, err
		})
	deleteAssignmentOp = newGroupOp("delete-assignment", func(r api.GroupTopic) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.GroupTopic) (struct{}, error) {
			return struct{}{}, c.DeleteAssignment(ctx, r.Group, r.Topic)
		})
)

// SeenMember records that a member of a group was seen now, registering it
// as a simple member when it is missing.
func (b *Broker) SeenMember(ctx context.Context, req api.SeenMember) error {
	_, err := seenMemberOp.run(ctx, b, req)
	return err
}

// StaleMembers lists, and with Remove removes, the members of a group not
// seen within the timeout.
func (b *Broker) StaleMembers(ctx context.Context, req api.StaleMembersRequest) ([]api.Member, error) {
	return staleMembersOp.run(ctx, b, req)
}

// SaveAssignment assigns a topic over a group's members, after removing
// the stale ones when asked, and saves it for the group and topic.
func (b *Broker) SaveAssignment(ctx context.Context, req api.SaveAssignmentRequest) (api.SaveAssignmentResult, error) {
	return saveAssignmentOp.run(ctx, b, req)
}

// SavedAssignment reads the saved assignment of a group and topic.
func (b *Broker) SavedAssignment(ctx context.Context, req api.GroupTopic) (api.SavedAssignment, error) {
	return savedAssignmentOp.run(ctx, b, req)
}

// DeleteSavedAssignment deletes the saved assignment of a group and topic.
func (b *Broker) DeleteSavedAssignment(ctx context.Context, req api.GroupTopic) error {
	_, err := deleteAssignmentOp.run(ctx, b, req)
	return err
}

// Assign computes a range assignment of a topic over the given members; it
// saves nothing and needs no coordinator.
func (b *Broker) Assign(ctx context.Context, req api.AssignRequest) ([]api.Assignment, error) {
	t := b.image().Topic(req.Topic)
	if t == nil {
		return nil, errUnknownTopic(req.Topic)
	}
	subs := make([]group.Subscription, 0, len(req.Members))
	seen := map[string]bool{}
	for _, m := range req.Members {
		if !seen[m] {
			seen[m] = true
			subs = append(subs, group.Subscription{MemberID: m, Topics: []string{req.Topic}})
		}
	}
	as, err := group.AssignPartitions(group.StrategyRange, subs, map[string]int32{req.Topic: int32(len(t.Partitions))})
	if err != nil {
		return nil, apiError(err)
	}
	return nonNilAssignments(as), nil
}

func apiMembers(ms []group.Member) []api.Member {
	out := make([]api.Member, len(ms))
	for i, m := range ms {
		t := m.LastSeen.UTC()
		out[i] = api.Member{ID: m.ID, LastSeen: &t}
	}
	return out
}

func nonNilAssignments(as []api.Assignment) []api.Assignment {
	out := make([]api.Assignment, len(as))
	for i, a := range as {
		out[i] = api.Assignment{MemberID: a.MemberID, Topics: nonNilTPs(a.Topics)}
	}
	return out
}
