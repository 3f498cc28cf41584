package group

import (
	"context"
	"fmt"
	"sort"

	"github.com/kairolog/kairolog/broker/api"
)

// Reset targets of ResetRequest.To.
const (
	ResetEarliest  = api.ResetEarliest
	ResetLatest    = api.ResetLatest
	ResetOffset    = api.ResetOffset
	ResetTimestamp = api.ResetTimestamp
)

// ResetRequest moves a group's committed offsets (POST
// /groups/{g}/reset-offsets).
type ResetRequest struct {
	// To is ResetEarliest (log start), ResetLatest (high watermark),
	// ResetOffset (Offset, clamped to [log start, high watermark]) or
	// ResetTimestamp (the first offset at or after Timestamp, Unix ms).
	To        string
	Offset    *int64
	Timestamp *int64
	// Topics whose every partition is reset; empty means the topics the
	// group has committed offsets for.
	Topics []string
}

// PartitionOffset is a partition and an offset (the core's vocabulary).
type PartitionOffset = api.PartitionOffset

// ResetOffsets sets the committed offset of every partition of the given
// topics, in one journal record, and returns them sorted. It is refused with
// ErrNonEmptyGroup while the group has any member (simple or protocol), since
// a live consumer would overwrite the reset with its next commit; members
// leave, or are removed when stale, first.
//
// The target offsets come from the partitions' leaders, often other
// brokers, so they are read under ctx without the group's lock: a slow
// broker then holds up only this request, not the group's other requests
// nor the coordinator's Close. The group is checked for members before the
// reads and again, under its lock, right before the write, so a member that
// joined in between still makes the reset fail.
func (c *Coordinator) ResetOffsets(ctx context.Context, groupID string, req ResetRequest) ([]PartitionOffset, error) {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return nil, err
	}
	switch req.To {
	case ResetEarliest, ResetLatest:
	case ResetOffset:
		if req.Offset == nil || *req.Offset < 0 {
			return nil, fmt.Errorf("%w: reset to offset needs a non-negative offset", ErrInvalidArgument)
		}
	case ResetTimestamp:
		if req.Timestamp == nil {
			return nil, fmt.Errorf("%w: reset to timestamp needs a timestamp", ErrInvalidArgument)
		}
	default:
		return nil, fmt.Errorf("%w: reset target %q is not earliest, latest, offset or timestamp", ErrInvalidArgument, req.To)
	}

	topics, err := c.resetTopics(gid, req.Topics)
	if err != nil {
		return nil, err
	}
	ctx, stop := c.bound(ctx)
	defer stop()
	out, err := c.resetTargets(ctx, req, topics)
	if err != nil {
		return nil, c.closedError(err)
	}
	if len(out) == 0 {
		return []PartitionOffset{}, nil
	}

	g, err := c.lockGroup(gid, true)
	if err != nil {
		return nil, err
	}
	defer c.unlockGroup(g)
	if n := len(g.members); n > 0 {
		return nil, fmt.Errorf("%w: group %q has %d members", ErrNonEmptyGroup, gid, n)
	}
	rec := &record{Type: recOffsets, TS: toMs(c.now())}
	for _, o := range out {
		rec.Offsets = append(rec.Offsets, recOffset{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset})
	}
	if err := c.write(ctx, g, rec); err != nil {
		return nil, err
	}
	return out, nil
}

// resetTopics refuses a reset of a group with members and returns the
// topics to reset: those asked for, else those the group has committed
// offsets for.
func (c *Coordinator) resetTopics(gid string, asked []string) ([]string, error) {
	g, err := c.lockGroup(gid, false)
	if err != nil {
		return nil, err
	}
	var committed []string
	if g != nil {
		n := len(g.members)
		committed = g.committedTopics()
		c.unlockGroup(g)
		if n > 0 {
			return nil, fmt.Errorf("%w: group %q has %d members", ErrNonEmptyGroup, gid, n)
		}
	}
	if len(asked) > 0 {
		return asked, nil
	}
	if len(committed) == 0 {
		return nil, fmt.Errorf("%w: no topics given and group %q has no committed offsets", ErrInvalidArgument, gid)
	}
	return committed, nil
}

// resetTargets reads the target offset of every partition of topics,
// sorted by topic and partition.
func (c *Coordinator) resetTargets(ctx context.Context, req ResetRequest, topics []string) ([]PartitionOffset, error) {
	var out []PartitionOffset
	seen := map[string]bool{}
	for _, t := range topics {
		t, n, err := c.topicSize(t)
		if err != nil {
			return nil, err
		}
		if seen[t] {
			continue
		}
		seen[t] = true
		for p := int32(0); p < n; p++ {
			off, err := c.resetTarget(ctx, req, t, p)
			if err != nil {
				return nil, err
			}
			out = append(out, PartitionOffset{Topic: t, Partition: p, Offset: off})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out, nil
}

func (c *Coordinator) resetTarget(ctx context.Context, req ResetRequest, topic string, p int32) (int64, error) {
	if req.To == ResetTimestamp {
		return c.partitions.OffsetForTimestamp(ctx, topic, p, *req.Timestamp)
	}
	b, err := c.partitions.Bounds(ctx, topic, p)
	if err != nil {
		return 0, err
	}
	switch req.To {
	case ResetEarliest:
		return b.LogStartOffset, nil
	case ResetLatest:
		return b.HighWatermark, nil
	}
	return min(max(*req.Offset, b.LogStartOffset), b.HighWatermark), nil
}

func (g *group) committedTopics() []string {
	set := map[string]bool{}
	for tp := range g.offsets {
		set[tp.Topic] = true
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// DeleteGroup deletes a group's committed offsets, saved assignments, config
// and generation (DELETE /groups/{g}). It is refused with ErrNonEmptyGroup
// while the group has members, and answers ErrUnknownGroup for a group the
// coordinator does not hold.
func (c *Coordinator) DeleteGroup(ctx context.Context, groupID string) error {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return err
	}
	g, err := c.lockGroup(gid, false)
	if err != nil {
		return err
	}
	if g == nil {
		return fmt.Errorf("%w: group %q does not exist", ErrUnknownGroup, gid)
	}
	defer c.unlockGroup(g)
	if n := len(g.members); n > 0 {
		return fmt.Errorf("%w: group %q has %d members", ErrNonEmptyGroup, gid, n)
	}
	return c.write(ctx, g, &record{Type: recDelete, TS: toMs(c.now())})
}
