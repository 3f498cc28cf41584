package broker

import (
	"context"
	"time"

	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/group"
)

// The original group API (membership, saved assignments, plain offsets),
// each request run on the group's coordinator.

func (b *Broker) JoinMember(ctx context.Context, g, m string) error {
	return b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error { return c.Join(ctx, g, m) },
		func(pc *client.Client) error { return pc.JoinMember(ctx, g, m) })
}

func (b *Broker) LeaveMember(ctx context.Context, g, m string) error {
	return b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error { return c.Leave(ctx, g, m) },
		func(pc *client.Client) error { return pc.LeaveMember(ctx, g, m) })
}

func (b *Broker) HeartbeatMember(ctx context.Context, g, m string) error {
	return b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error { return c.Heartbeat(ctx, g, m) },
		func(pc *client.Client) error { return pc.HeartbeatMember(ctx, g, m) })
}

func (b *Broker) Members(ctx context.Context, g string) (out []client.Member, err error) {
	err = b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error {
			ms, err := c.Members(g)
			out = toClientMembers(ms)
			return err
		},
		func(pc *client.Client) error {
			r, err := pc.Members(ctx, g)
			out = r.Members
			return err
		})
	return out, err
}

func (b *Broker) StaleMembers(ctx context.Context, g string, timeout time.Duration) (out []client.Member, err error) {
	err = b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error {
			ms, err := c.StaleMembers(g, timeout)
			out = toClientMembers(ms)
			return err
		},
		func(pc *client.Client) error {
			r, err := pc.StaleMembers(ctx, g, timeout.Milliseconds())
			out = r.Members
			return err
		})
	return out, err
}

func (b *Broker) RemoveStaleMembers(ctx context.Context, g string, timeout time.Duration) (out []client.Member, err error) {
	err = b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error {
			ms, err := c.RemoveStaleMembers(ctx, g, timeout)
			out = toClientMembers(ms)
			return err
		},
		func(pc *client.Client) error {
			r, err := pc.RemoveStaleMembers(ctx, g, timeout.Milliseconds())
			out = r.RemovedMembers
			return err
		})
	return out, err
}

// Assign computes a range assignment of topic over members; it saves
// nothing and needs no coordinator.
func (b *Broker) Assign(ctx context.Context, topic string, members []string) ([]client.Assignment, error) {
	t := b.image().Topic(topic)
	if t == nil {
		return nil, errUnknownTopic(topic)
	}
	subs := make([]group.Subscription, 0, len(members))
	seen := map[string]bool{}
	for _, m := range members {
		if !seen[m] {
			seen[m] = true
			subs = append(subs, group.Subscription{MemberID: m, Topics: []string{topic}})
		}
	}
	as, err := group.AssignPartitions(group.StrategyRange, subs, map[string]int32{topic: int32(len(t.Partitions))})
	if err != nil {
		return nil, apiError(err)
	}
	return toClientAssignments(as), nil
}

func (b *Broker) Rebalance(ctx context.Context, g, topic string) (out []client.Assignment, err error) {
	err = b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error {
			as, err := c.Rebalance(ctx, g, topic)
			out = toClientAssignments(as)
			return err
		},
		func(pc *client.Client) error {
			r, err := pc.Rebalance(ctx, g, topic)
			out = r.Assignments
			return err
		})
	return out, err
}

func (b *Broker) CleanupAndRebalance(ctx context.Context, g, topic string, timeout time.Duration) (removed []client.Member, out []client.Assignment, err error) {
	err = b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error {
			rm, as, err := c.CleanupAndRebalance(ctx, g, topic, timeout)
			removed, out = toClientMembers(rm), toClientAssignments(as)
			return err
		},
		func(pc *client.Client) error {
			r, err := pc.CleanupAndRebalance(ctx, g, topic, timeout.Milliseconds())
			removed, out = r.RemovedMembers, r.Assignments
			return err
		})
	return removed, out, err
}

func (b *Broker) SavedAssignments(ctx context.Context, g, topic string) (found bool, out []client.Assignment, err error) {
	err = b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error {
			as, ok, err := c.SavedAssignment(g, topic)
			found, out = ok, toClientAssignments(as)
			return err
		},
		func(pc *client.Client) error {
			r, err := pc.SavedAssignments(ctx, g, topic)
			found, out = r.Found, r.Assignments
			return err
		})
	return found, out, err
}

func (b *Broker) DeleteSavedAssignments(ctx context.Context, g, topic string) error {
	return b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error { return c.DeleteAssignment(ctx, g, topic) },
		func(pc *client.Client) error { return pc.DeleteSavedAssignments(ctx, g, topic) })
}

func (b *Broker) CommitOffset(ctx context.Context, req client.CommitOffsetRequest) error {
	return b.onCoordinator(ctx, req.Group,
		func(c *group.Coordinator) error {
			cr := group.CommitRequest{Group: req.Group, MemberID: req.MemberID, Generation: group.NoGeneration,
				Offsets: []group.OffsetCommit{{Topic: req.Topic, Partition: req.Partition, Offset: req.Offset}}}
			if req.Generation != nil {
				cr.Generation = *req.Generation
			}
			return c.CommitOffsets(ctx, cr)
		},
		func(pc *client.Client) error { return pc.CommitOffset(ctx, req) })
}

func (b *Broker) Offset(ctx context.Context, g, topic string, partition int32) (off int64, found bool, err error) {
	err = b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error {
			oc, ok, err := c.Offset(g, topic, partition)
			off, found = oc.Offset, ok
			return err
		},
		func(pc *client.Client) error {
			r, err := pc.Offset(ctx, g, topic, partition)
			off, found = r.Offset, r.Found
			return err
		})
	return off, found, err
}
