package core

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/group"
	"github.com/kairolog/kairolog/broker/peer"
)

// The consumer-group requests: the generation protocol, committed offsets
// and group administration, each run on the group's coordinator.

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

var (
	joinGroupOp = newGroupOp("join", func(r api.JoinGroupRequest) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.JoinGroupRequest) (api.JoinGroupResult, error) {
			res, err := c.JoinGroup(ctx, group.JoinRequest{Group: r.Group, MemberID: r.MemberID, ClientID: r.ClientID,
				Topics: r.Topics, SessionTimeout: ms(r.SessionTimeoutMs), RebalanceTimeout: ms(r.RebalanceTimeoutMs),
				ProtocolType: r.ProtocolType, Protocols: r.Protocols})
			return api.JoinGroupResult{Group: res.Group, MemberID: res.MemberID, Generation: res.Generation,
				Leader: res.Leader, Members: res.Members, ProtocolType: res.ProtocolType, Protocol: res.Protocol}, err
		})
	syncGroupOp = newGroupOp("sync", func(r api.SyncGroupRequest) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.SyncGroupRequest) (api.SyncGroupResult, error) {
			res, err := c.Sync(ctx, group.SyncRequest{Group: r.Group, MemberID: r.MemberID, Generation: r.Generation,
				ProtocolType: r.ProtocolType, Protocol: r.Protocol, Assignments: r.Assignments})
			return api.SyncGroupResult{Group: r.Group, MemberID: r.MemberID, Generation: r.Generation,
				Assignment: nonNilTPs(res.Assignment), ProtocolType: res.ProtocolType, Protocol: res.Protocol,
				MemberAssignment: res.MemberAssignment}, err
		})
	heartbeatOp = newGroupOp("heartbeat", func(r api.MemberGeneration) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.MemberGeneration) (struct{}, error) {
			return struct{}{}, c.HeartbeatGroup(ctx, r.Group, r.MemberID, r.Generation)
		})
	leaveGroupOp = newGroupOp("leave", func(r api.LeaveGroupRequest) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.LeaveGroupRequest) (struct{}, error) {
			return struct{}{}, c.LeaveGroup(ctx, r.Group, r.MemberID)
		})
	commitOffsetsOp = newGroupOp("commit", func(r api.CommitOffsetsRequest) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.CommitOffsetsRequest) (struct{}, error) {
			return struct{}{}, c.CommitOffsets(ctx, group.CommitRequest{Group: r.Group, MemberID: r.MemberID,
				Generation: r.Generation, Offsets: r.Offsets})
		})
	offsetsOp = newGroupOp("offsets", func(r api.OffsetsRequest) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.OffsetsRequest) ([]api.OffsetCommit, error) {
			if len(r.Partitions) == 0 {
				return c.Offsets(r.Group)
			}
			out := make([]api.OffsetCommit, len(r.Partitions))
			for i, tp := range r.Partitions {
				oc, found, err := c.Offset(r.Group, tp.Topic, tp.Partition)
				if err != nil {
					return nil, err
				}
				if !found {
					oc.Offset = -1
				}
				out[i] = oc
			}
			return out, nil
		})
	describeGroupOp = newGroupOp("describe", func(r api.DescribeGroupRequest) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.DescribeGroupRequest) (api.GroupDescription, error) {
			var d group.Description
			var err error
			if r.WithoutLag {
				d, err = c.DescribeMembers(r.Group)
			} else {
				d, err = c.Describe(ctx, r.Group, r.Topics)
			}
			if err != nil {
				return api.GroupDescription{}, err
			}
			return describedGroup(d), nil
		})
	setGroupConfigOp = newGroupOp("config", func(r api.GroupConfig) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.GroupConfig) (api.GroupConfig, error) {
			res, err := c.SetConfig(ctx, r.Group, group.GroupConfig{SessionTimeout: ms(r.SessionTimeoutMs), AssignmentStrategy: r.AssignmentStrategy})
			return api.GroupConfig{Group: r.Group, SessionTimeoutMs: res.SessionTimeout.Milliseconds(), AssignmentStrategy: res.AssignmentStrategy}, err
		})
	resetOffsetsOp = newGroupOp("reset-offsets", func(r api.ResetOffsetsRequest) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.ResetOffsetsRequest) ([]api.PartitionOffset, error) {
			return c.ResetOffsets(ctx, r.Group, group.ResetRequest{To: r.To, Offset: r.Offset, Timestamp: r.Timestamp, Topics: r.Topics})
		})
	deleteGroupOp = newGroupOp("delete", func(r api.DeleteGroupRequest) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.DeleteGroupRequest) (struct{}, error) {
			return struct{}{}, c.DeleteGroup(ctx, r.Group)
		})
	deleteOffsetsOp = newGroupOp("delete-offsets", func(r api.DeleteOffsetsRequest) string { return r.Group },
		func(ctx context.Context, c *group.Coordinator, r api.DeleteOffsetsRequest) ([]api.DeletedOffset, error) {
			tps := make([]group.TopicPartition, len(r.Partitions))
			for i, tp := range r.Partitions {
				tps[i] = group.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}
			}
			errs, err := c.DeleteOffsets(ctx, r.Group, tps)
			if err != nil {
				return nil, err
			}
			out := make([]api.DeletedOffset, len(tps))
			for i, tp := range tps {
				out[i] = api.DeletedOffset{Topic: tp.Topic, Partition: tp.Partition}
				if errs[i] != nil {
					e, ok := AsAPIError(errs[i])
					if !ok {
						e = api.Errorf(api.CodeInternal, "%v", errs[i])
					}
					out[i].Err = e
				}
			}
			return out, nil
		})
)

// JoinGroup joins (or rejoins) a generation of the group; it waits until
// every member of the group has rejoined, up to the rebalance timeout.
func (b *Broker) JoinGroup(ctx context.Context, req api.JoinGroupRequest) (api.JoinGroupResult, error) {
	return joinGroupOp.run(ctx, b, req)
}

// SyncGroup answers a member's assignment in its generation; the leader
// of a group whose members assign sends their assignments.
func (b *Broker) SyncGroup(ctx context.Context, req api.SyncGroupRequest) (api.SyncGroupResult, error) {
	return syncGroupOp.run(ctx, b, req)
}

// Heartbeat keeps a member of a generation alive; REBALANCE_IN_PROGRESS
// tells it to join again.
func (b *Broker) Heartbeat(ctx context.Context, req api.MemberGeneration) error {
	_, err := heartbeatOp.run(ctx, b, req)
	return err
}

// LeaveGroup takes a member of either kind out of its group.
func (b *Broker) LeaveGroup(ctx context.Context, req api.LeaveGroupRequest) error {
	_, err := leaveGroupOp.run(ctx, b, req)
	return err
}

// CommitOffsets commits offsets, fenced by the member's generation or
// unfenced (api.NoGeneration).
func (b *Broker) CommitOffsets(ctx context.Context, req api.CommitOffsetsRequest) error {
	_, err := commitOffsetsOp.run(ctx, b, req)
	return err
}

// Offsets reads a group's committed offsets: every one, sorted, or those
// of the partitions asked for, in their order, -1 where none is committed.
func (b *Broker) Offsets(ctx context.Context, req api.OffsetsRequest) ([]api.OffsetCommit, error) {
	return offsetsOp.run(ctx, b, req)
}

// DescribeGroup describes a group: its state, members and, unless asked
// not to, its committed offsets with their lag.
func (b *Broker) DescribeGroup(ctx context.Context, req api.DescribeGroupRequest) (api.GroupDescription, error) {
	return describeGroupOp.run(ctx, b, req)
}

// SetGroupConfig sets a group's session timeout and assignment strategy.
func (b *Broker) SetGroupConfig(ctx context.Context, cfg api.GroupConfig) (api.GroupConfig, error) {
	return setGroupConfigOp.run(ctx, b, cfg)
}

// ResetOffsets moves an empty group's committed offsets.
func (b *Broker) ResetOffsets(ctx context.Context, req api.ResetOffsetsRequest) ([]api.PartitionOffset, error) {
	return resetOffsetsOp.run(ctx, b, req)
}

// DeleteGroup deletes an empty group's offsets and saved state.
func (b *Broker) DeleteGroup(ctx context.Context, req api.DeleteGroupRequest) error {
	_, err := deleteGroupOp.run(ctx, b, req)
	return err
}

// DeleteOffsets deletes a group's committed offsets of some partitions,
// each answered on its own: see group.Coordinator.DeleteOffsets.
func (b *Broker) DeleteOffsets(ctx context.Context, req api.DeleteOffsetsRequest) ([]api.DeletedOffset, error) {
	return deleteOffsetsOp.run(ctx, b, req)
}

// listGroupsTimeout bounds the wait for one broker's groups.
const listGroupsTimeout = 3 * time.Second

// opListGroups asks a broker for the groups its own coordinators hold.
var opListGroups = peer.NewOp[struct{}, api.GroupList]("core/group/list")

// ListGroups merges the groups of every coordinator in the cluster: this
// broker's, and those of every other live broker asked at once (each
// answers with its own coordinators only). A broker that does not answer
// in time does not fail the list: its groups are missing, the list says it
// is partial and names the broker, as it does for a broker whose
// coordinators are still loading. A Local request (the Kafka listener's)
// lists this broker's own groups only, as a Kafka broker does: Kafka's
// clients ask every broker and concatenate the answers.
func (b *Broker) ListGroups(ctx context.Context) (api.GroupList, error) {
	out := api.GroupList{Groups: b.localGroups()}
	if b.coords.Loading() > 0 {
		out.Partial, out.UnavailableBrokers = true, []int32{b.id}
	}
	if IsForwarded(ctx) || isLocal(ctx) {
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
			cctx, cancel := context.WithTimeout(ctx, listGroupsTimeout)
			gl, err := forward(cctx, b, int32(id), -1, opListGroups, struct{}{}, api.CodeCoordinatorNotAvailable)
			cancel()
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
		return api.GroupList{}, apiError(err)
	}
	sort.Slice(out.Groups, func(i, j int) bool { return out.Groups[i].Group < out.Groups[j].Group })
	slices.Sort(out.UnavailableBrokers)
	return out, nil
}

func (b *Broker) localGroups() []api.GroupSummary {
	out := []api.GroupSummary{}
	for _, c := range b.coords.Loaded() {
		for _, s := range c.ListGroups() {
			out = append(out, api.GroupSummary{Group: s.Group, State: s.State.String(), Generation: s.Generation, Members: s.Members})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}

// describedGroup is a coordinator's description in the core's vocabulary.
func describedGroup(d group.Description) api.GroupDescription {
	out := api.GroupDescription{Group: d.Group, State: d.State.String(), Generation: d.Generation,
		AssignmentStrategy: d.AssignmentStrategy, SessionTimeoutMs: d.SessionTimeout.Milliseconds(),
		Leader: d.Leader, Members: make([]api.GroupMember, len(d.Members)), Offsets: d.Offsets, TotalLag: d.TotalLag,
		ProtocolType: d.ProtocolType, Protocol: d.Protocol}
	for i, m := range d.Members {
		topics := m.Topics
		if topics == nil {
			topics = []string{}
		}
		out.Members[i] = api.GroupMember{ID: m.ID, ClientID: m.ClientID, LastSeen: m.LastSeen.UTC(),
			Topics: topics, Assignment: nonNilTPs(m.Assignment),
			ProtocolMetadata: m.ProtocolMetadata, MemberAssignment: m.MemberAssignment}
	}
	if out.Offsets == nil {
		out.Offsets = []api.PartitionLag{}
	}
	return out
}

// nonNilTPs is tps with an empty list of partitions, never null, for each
// topic, and an empty list for none.
func nonNilTPs(tps []api.TopicPartitions) []api.TopicPartitions {
	out := make([]api.TopicPartitions, len(tps))
	for i, tp := range tps {
		out[i] = api.TopicPartitions{Topic: tp.Topic, Partitions: tp.Partitions}
		if out[i].Partitions == nil {
			out[i].Partitions = []int32{}
		}
	}
	return out
}
