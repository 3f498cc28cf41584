package broker

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/group"
)

// The generation protocol and group administration, each request run on the
// group's coordinator.

func (b *Broker) JoinGroup(ctx context.Context, g string, req client.JoinGroupRequest) (out *client.JoinGroupResponse, err error) {
	err = b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error {
			res, err := c.JoinGroup(ctx, group.JoinRequest{Group: g, MemberID: req.MemberID, ClientID: req.ClientID,
				Topics: req.Topics, SessionTimeout: time.Duration(req.SessionTimeoutMs) * time.Millisecond,
				RebalanceTimeout: time.Duration(req.RebalanceTimeoutMs) * time.Millisecond})
			if err != nil {
				return err
			}
			out = &client.JoinGroupResponse{Group: res.Group, MemberID: res.MemberID, Generation: res.Generation,
				Leader: res.Leader, Members: make([]client.JoinedMember, len(res.Members))}
			for i, m := range res.Members {
				out.Members[i] = client.JoinedMember{ID: m.ID, Topics: m.Topics}
			}
			return nil
		},
		func(pc *client.Client) (err error) {
			out, err = pc.JoinGroup(ctx, g, req)
			return err
		})
	return out, err
}

func (b *Broker) SyncGroup(ctx context.Context, g, member string, generation int32) (out *client.SyncGroupResponse, err error) {
	err = b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error {
			tps, err := c.SyncGroup(ctx, g, member, generation)
			out = &client.SyncGroupResponse{Group: g, MemberID: member, Generation: generation, Assignment: toClientTPs(tps)}
			return err
		},
		func(pc *client.Client) (err error) {
			out, err = pc.SyncGroup(ctx, g, member, generation)
			return err
		})
	return out, err
}

func (b *Broker) Heartbeat(ctx context.Context, g, member string, generation int32) error {
	return b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error { return c.HeartbeatGroup(ctx, g, member, generation) },
		func(pc *client.Client) error { return pc.Heartbeat(ctx, g, member, generation) })
}

func (b *Broker) LeaveGroup(ctx context.Context, g, member string) error {
	return b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error { return c.LeaveGroup(ctx, g, member) },
		func(pc *client.Client) error { return pc.LeaveGroup(ctx, g, member) })
}

func (b *Broker) CommitOffsets(ctx context.Context, g string, req client.CommitOffsetsRequest) error {
	return b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error {
			cr := group.CommitRequest{Group: g, MemberID: req.MemberID, Generation: req.Generation,
				Offsets: make([]group.OffsetCommit, len(req.Offsets))}
			for i, o := range req.Offsets {
				cr.Offsets[i] = group.OffsetCommit{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset, Metadata: o.Metadata}
			}
			return c.CommitOffsets(ctx, cr)
		},
		func(pc *client.Client) error { return pc.CommitOffsets(ctx, g, req) })
}

func (b *Broker) GroupOffsets(ctx context.Context, g string) (out []client.OffsetCommit, err error) {
	err = b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error {
			offs, err := c.Offsets(g)
			out = make([]client.OffsetCommit, len(offs))
			for i, o := range offs {
				out[i] = client.OffsetCommit{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset, Metadata: o.Metadata}
			}
			return err
		},
		func(pc *client.Client) error {
			r, err := pc.GroupOffsets(ctx, g)
			out = r.Offsets
			return err
		})
	return out, err
}

// listGroupsTimeout bounds the wait for one broker's groups.
const listGroupsTimeout = 3 * time.Second

// ListGroups merges the groups of every coordinator in the cluster: this
// broker's, and those of every other live broker asked at once with a
// forwarded request (which answers with its own coordinators only). A
// broker that does not answer in time does not fail the list: its groups
// are missing, the list says it is partial and names the broker, as it
// does for a broker whose coordinators are still loading.
func (b *Broker) ListGroups(ctx context.Context) (*client.GroupList, error) {
	out := &client.GroupList{Groups: b.localGroups()}
	if b.coords.loading() > 0 {
		out.Partial, out.UnavailableBrokers = true, []int32{b.id}
	}
	if IsForwarded(ctx) {
		return out, nil
	}
	img := b.image()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range img.BrokerIDs() {
		if int32(id) == b.id || !img.Live(id) {
			continue
		}
		wg.Go(func() {
			var gl *client.GroupList
			pc, err := b.peer(int32(id))
			if err == nil {
				cctx, cancel := context.WithTimeout(ctx, listGroupsTimeout)
				gl, err = pc.GroupList(cctx)
				cancel()
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				b.log.Debug("Listing the groups of a broker failed", "peer", id, "error", err)
				out.Partial = true
				out.UnavailableBrokers = append(out.UnavailableBrokers, int32(id))
				return
			}
			out.Groups = append(out.Groups, gl.Groups...)
			if gl.Partial {
				out.Partial = true
				out.UnavailableBrokers = append(out.UnavailableBrokers, gl.UnavailableBrokers...)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, apiError(err)
	}
	sort.Slice(out.Groups, func(i, j int) bool { return out.Groups[i].Group < out.Groups[j].Group })
	slices.Sort(out.UnavailableBrokers)
	return out, nil
}

func (b *Broker) localGroups() []client.GroupSummary {
	out := []client.GroupSummary{}
	for _, c := range b.coords.loaded() {
		for _, s := range c.ListGroups() {
			out = append(out, client.GroupSummary{Group: s.Group, State: s.State.String(), Generation: s.Generation, Members: s.Members})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}

func (b *Broker) DescribeGroup(ctx context.Context, g string, topics []string) (out *client.GroupDescription, err error) {
	err = b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error {
			d, err := c.Describe(ctx, g, topics)
			if err != nil {
				return err
			}
			out = describeToClient(d)
			return nil
		},
		func(pc *client.Client) (err error) {
			out, err = pc.DescribeGroup(ctx, g, topics...)
			return err
		})
	return out, err
}

func describeToClient(d group.Description) *client.GroupDescription {
	out := &client.GroupDescription{Group: d.Group, State: d.State.String(), Generation: d.Generation,
		AssignmentStrategy: d.AssignmentStrategy, SessionTimeoutMs: d.SessionTimeout.Milliseconds(),
		Leader: d.Leader, Members: make([]client.GroupMember, len(d.Members)),
		Offsets: make([]client.PartitionLag, len(d.Offsets)), TotalLag: d.TotalLag}
	for i, m := range d.Members {
		topics := m.Topics
		if topics == nil {
			topics = []string{}
		}
		out.Members[i] = client.GroupMember{ID: m.ID, ClientID: m.ClientID, LastSeen: m.LastSeen.UTC(),
			Topics: topics, Assignment: toClientTPs(m.Assignment)}
	}
	for i, o := range d.Offsets {
		out.Offsets[i] = client.PartitionLag{Topic: o.Topic, Partition: o.Partition, CommittedOffset: o.CommittedOffset,
			HighWatermark: o.HighWatermark, LogEndOffset: o.LogEndOffset, Lag: o.Lag, Metadata: o.Metadata}
	}
	return out
}

func (b *Broker) SetGroupConfig(ctx context.Context, g string, cfg client.GroupConfig) (out *client.GroupConfig, err error) {
	err = b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error {
			res, err := c.SetConfig(ctx, g, group.GroupConfig{
				SessionTimeout:     time.Duration(cfg.SessionTimeoutMs) * time.Millisecond,
				AssignmentStrategy: cfg.AssignmentStrategy})
			out = &client.GroupConfig{Group: g, SessionTimeoutMs: res.SessionTimeout.Milliseconds(), AssignmentStrategy: res.AssignmentStrategy}
			return err
		},
		func(pc *client.Client) (err error) {
			out, err = pc.SetGroupConfig(ctx, g, cfg)
			return err
		})
	return out, err
}

func (b *Broker) ResetOffsets(ctx context.Context, g string, req client.ResetOffsetsRequest) (out []client.PartitionOffset, err error) {
	err = b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error {
			offs, err := c.ResetOffsets(ctx, g, group.ResetRequest{To: req.To, Offset: req.Offset, Timestamp: req.Timestamp, Topics: req.Topics})
			out = make([]client.PartitionOffset, len(offs))
			for i, o := range offs {
				out[i] = client.PartitionOffset{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset}
			}
			return err
		},
		func(pc *client.Client) error {
			r, err := pc.ResetOffsets(ctx, g, req)
			out = r.Offsets
			return err
		})
	return out, err
}

func (b *Broker) DeleteGroup(ctx context.Context, g string) error {
	return b.onCoordinator(ctx, g,
		func(c *group.Coordinator) error { return c.DeleteGroup(ctx, g) },
		func(pc *client.Client) error { return pc.DeleteGroup(ctx, g) })
}
