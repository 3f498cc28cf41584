package group

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// GroupConfig is a group's own settings (PUT /groups/{g}/config).
type GroupConfig struct {
	// SessionTimeout is how long a member may go unseen before the cleanup
	// pass removes it. It applies to every member, including protocol
	// members that asked for another one when they joined; zero means no
	// group setting (then a member's own timeout, else the coordinator's
	// default, applies).
	SessionTimeout time.Duration
	// AssignmentStrategy is StrategyRange (the default, also for "") or
	// StrategyRoundRobin.
	AssignmentStrategy string
}

// SetConfig replaces a group's config and returns it with defaults filled
// in. A new strategy starts a rebalance of a group with protocol members.
func (c *Coordinator) SetConfig(ctx context.Context, groupID string, cfg GroupConfig) (GroupConfig, error) {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return GroupConfig{}, err
	}
	if err := cleanTimeout("session timeout", cfg.SessionTimeout); err != nil {
		return GroupConfig{}, err
	}
	if cfg.AssignmentStrategy != "" && !ValidStrategy(cfg.AssignmentStrategy) {
		return GroupConfig{}, fmt.Errorf("%w: unknown assignment strategy %q (want %q or %q)",
			ErrInvalidArgument, cfg.AssignmentStrategy, StrategyRange, StrategyRoundRobin)
	}
	g, err := c.lockGroup(gid, true)
	if err != nil {
		return GroupConfig{}, err
	}
	defer c.unlockGroup(g)
	now := c.now()
	err = c.write(ctx, g, &record{Type: recConfig, TS: toMs(now), SessionMs: durMs(cfg.SessionTimeout), Strategy: cfg.AssignmentStrategy})
	if err != nil {
		return GroupConfig{}, err
	}
	c.settle(ctx, g)
	return c.effectiveConfig(g), nil
}

// Config returns a group's config with defaults filled in, and whether the
// group has one of its own.
func (c *Coordinator) Config(groupID string) (GroupConfig, bool, error) {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return GroupConfig{}, false, err
	}
	g, err := c.lockGroup(gid, false)
	if err != nil {
		return GroupConfig{}, false, err
	}
	if g == nil {
		return GroupConfig{SessionTimeout: c.sessionTimeout, AssignmentStrategy: StrategyRange}, false, nil
	}
	defer c.unlockGroup(g)
	return c.effectiveConfig(g), g.config != nil, nil
}

func (c *Coordinator) effectiveConfig(g *group) GroupConfig {
	return GroupConfig{SessionTimeout: c.groupSessionTimeout(g), AssignmentStrategy: g.strategy()}
}

// Summary is one group of ListGroups.
type Summary struct {
	Group      string
	State      State
	Generation int32
	Members    int
}

// ListGroups lists, sorted, the groups that have members or committed offsets.
func (c *Coordinator) ListGroups() []Summary {
	out := []Summary{}
	for _, id := range c.groupIDs() {
		g, err := c.lockGroup(id, false)
		if err != nil || g == nil {
			continue
		}
		if len(g.members) > 0 || len(g.offsets) > 0 {
			out = append(out, Summary{Group: id, State: g.reportedState(), Generation: g.generation, Members: len(g.members)})
		}
		c.unlockGroup(g)
	}
	return out
}

// Description describes a group (GET /groups/{g}).
type Description struct {
	Group              string
	State              State
	Generation         int32
	AssignmentStrategy string
	SessionTimeout     time.Duration
	Leader             string
	Members            []DescribedMember
	Offsets            []PartitionLag
	// TotalLag sums the lag of the partitions whose offsets could be read.
	TotalLag int64
	// ProtocolType is set for a group whose members assign, and Protocol
	// is the protocol its current generation chose.
	ProtocolType string
	Protocol     string
}

// DescribedMember is one member of a described group. A protocol member
// shows its subscription and the assignment of the current generation; a
// simple member shows the topics and partitions the saved assignments
// (Rebalance) give it.
type DescribedMember struct {
	ID         string
	ClientID   string
	LastSeen   time.Time
	Topics     []string
	Assignment []TopicPartitions
	// ProtocolMetadata and MemberAssignment, for a member that assigns:
	// its metadata for the chosen protocol and the bytes its leader
	// assigned it.
	ProtocolMetadata []byte
	MemberAssignment []byte
}

// PartitionLag is a partition's committed offset and how far it trails the
// high watermark (the core's vocabulary). CommittedOffset is -1 when
// nothing is committed; the lag is then HighWatermark − log start. Offsets
// the broker cannot read (a deleted topic) are -1, as is the lag.
type PartitionLag = api.PartitionLag

// Describe describes a group: ErrUnknownGroup for a group with no members,
// offsets, saved assignments or config. Offsets lists the committed
// partitions plus every partition of topics (ErrUnknownTopic for a topic
// that does not exist). The group is read under its lock; the partitions'
// offsets are read afterwards from their leaders, under ctx.
func (c *Coordinator) Describe(ctx context.Context, groupID string, topics []string) (Description, error) {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return Description{}, err
	}
	want := map[TopicPartition]bool{}
	for _, t := range topics {
		t, err := cleanName("topic", t)
		if err != nil {
			return Description{}, err
		}
		n, ok := c.partitions.PartitionCount(t)
		if !ok {
			return Description{}, fmt.Errorf("%w: topic %q does not exist", ErrUnknownTopic, t)
		}
		for p := int32(0); p < n; p++ {
			want[TopicPartition{t, p}] = true
		}
	}

	g, err := c.lockGroup(gid, false)
	if err != nil {
		return Description{}, err
	}
	if g == nil {
		return Description{}, fmt.Errorf("%w: group %q does not exist", ErrUnknownGroup, gid)
	}
	d := c.describeLocked(g)
	committedAt := make(map[TopicPartition]committed, len(g.offsets))
	for tp, co := range g.offsets {
		committedAt[tp] = co
		want[tp] = true
	}
	c.unlockGroup(g)

	// Offsets are read without the group's lock: they come from the
	// partitions' leaders, which may be slow or unreachable.
	ctx, stop := c.bound(ctx)
	defer stop()
	tps := make([]TopicPartition, 0, len(want))
	for tp := range want {
		tps = append(tps, tp)
	}
	sortTPs(tps)
	d.Offsets = make([]PartitionLag, 0, len(tps))
	for _, tp := range tps {
		pl := c.partitionLag(ctx, tp, committedAt)
		if pl.Lag > 0 {
			d.TotalLag += pl.Lag
		}
		d.Offsets = append(d.Offsets, pl)
	}
	// A request that ended, or a coordinator that closed, would leave
	// every remaining partition at -1: answer that rather than a partial
	// description.
	if err := ctx.Err(); err != nil {
		return Description{}, c.closedError(err)
	}
	return d, nil
}

// DescribeMembers describes a group as Describe does, without its
// offsets: ErrUnknownGroup for a group that holds nothing.
func (c *Coordinator) DescribeMembers(groupID string) (Description, error) {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return Description{}, err
	}
	g, err := c.lockGroup(gid, false)
	if err != nil {
		return Description{}, err
	}
	if g == nil {
		return Description{}, fmt.Errorf("%w: group %q does not exist", ErrUnknownGroup, gid)
	}
	defer c.unlockGroup(g)
	d := c.describeLocked(g)
	d.Offsets = []PartitionLag{}
	return d, nil
}

// describeLocked is everything Describe shows but the offsets; g is locked.
func (c *Coordinator) describeLocked(g *group) Description {
	return Description{
		Group: g.id, State: g.reportedState(), Generation: g.generation,
		AssignmentStrategy: g.strategy(), SessionTimeout: c.groupSessionTimeout(g), Leader: g.leader,
		Members: g.describeMembers(), ProtocolType: g.protocolType, Protocol: g.protocol,
	}
}

func (c *Coordinator) partitionLag(ctx context.Context, tp TopicPartition, committedAt map[TopicPartition]committed) PartitionLag {
	pl := PartitionLag{Topic: tp.Topic, Partition: tp.Partition, CommittedOffset: -1, HighWatermark: -1, LogEndOffset: -1, Lag: -1}
	co, has := committedAt[tp]
	if has {
		pl.CommittedOffset, pl.Metadata = co.offset, co.metadata
	}
	b, err := c.partitions.Bounds(ctx, tp.Topic, tp.Partition)
	if err != nil {
		return pl
	}
	pl.LogEndOffset, pl.HighWatermark = b.LogEndOffset, b.HighWatermark
	if has {
		pl.Lag = max(0, b.HighWatermark-co.offset)
	} else {
		pl.Lag = max(0, b.HighWatermark-b.LogStartOffset)
	}
	return pl
}

// describeMembers lists the members with what each consumes.
func (g *group) describeMembers() []DescribedMember {
	out := make([]DescribedMember, 0, len(g.members))
	for _, id := range g.sortedMemberIDs() {
		m := g.members[id]
		dm := DescribedMember{ID: id, ClientID: m.clientID, LastSeen: m.lastSeen}
		switch {
		case m.protocol:
			dm.Topics, dm.Assignment = slices.Clone(m.topics), cloneTopicPartitions(m.assignment)
			if g.protocolType != "" {
				dm.ProtocolMetadata = slices.Clone(protocolNamed(m.protocols, g.protocol).Metadata)
				dm.MemberAssignment = slices.Clone(m.memberAssignment)
			}
		case g.joins[id] != nil:
			dm.ClientID, dm.Topics = g.joins[id].clientID, slices.Clone(g.joins[id].topics)
		default:
			dm.Assignment = g.savedAssignmentOf(id)
			for _, tp := range dm.Assignment {
				dm.Topics = append(dm.Topics, tp.Topic)
			}
		}
		if dm.Topics == nil {
			dm.Topics = []string{}
		}
		if dm.Assignment == nil {
			dm.Assignment = []TopicPartitions{}
		}
		out = append(out, dm)
	}
	return out
}

// savedAssignmentOf gathers what the saved assignments give one member.
func (g *group) savedAssignmentOf(id string) []TopicPartitions {
	got := map[string][]int32{}
	for _, as := range g.saved {
		for _, a := range as {
			if a.MemberID != id {
				continue
			}
			for _, tp := range a.Topics {
				if len(tp.Partitions) > 0 {
					got[tp.Topic] = append(got[tp.Topic], tp.Partitions...)
				}
			}
		}
	}
	return toTopicPartitions(got)
}
