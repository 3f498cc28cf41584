package group

import (
	"context"
	"fmt"
	"sort"
)

// Reset targets of ResetRequest.To.
const (
	ResetEarliest  = "earliest"
	ResetLatest    = "latest"
	ResetOffset    = "offset"
	ResetTimestamp = "timestamp"
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

// PartitionOffset is a partition and an offset.
type PartitionOffset struct {
	Topic     string
	Partition int32
	Offset    int64
}

// ResetOffsets sets the committed offset of every partition of the given
// topics, in one journal record, and returns them sorted. It is refused with
// ErrNonEmptyGroup while the group has any member (simple or protocol), since
// a live consumer would overwrite the reset with its next commit; members
// leave, or are removed when stale, first.
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

	g, err := c.lockGroup(gid, true)
	if err != nil {
		return nil, err
	}
	defer c.unlockGroup(g)
	if n := len(g.members); n > 0 {
		return nil, fmt.Errorf("%w: group %q has %d members", ErrNonEmptyGroup, gid, n)
	}
	topics := req.Topics
	if len(topics) == 0 {
		topics = g.committedTopics()
		if len(topics) == 0 {
			return nil, fmt.Errorf("%w: no topics given and group %q has no committed offsets", ErrInvalidArgument, gid)
		}
	}
	// Offsets are read under the group's lock so that nothing commits
	// between the check for members and the write.
	rec := &record{Type: recOffsets, TS: toMs(c.now())}
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
			off, err := c.resetTarget(req, t, p)
			if err != nil {
				return nil, err
			}
			rec.Offsets = append(rec.Offsets, recOffset{Topic: t, Partition: p, Offset: off})
			out = append(out, PartitionOffset{Topic: t, Partition: p, Offset: off})
		}
	}
	if len(out) == 0 {
		return []PartitionOffset{}, nil
	}
	if err := c.write(ctx, g, rec); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out, nil
}

func (c *Coordinator) resetTarget(req ResetRequest, topic string, p int32) (int64, error) {
	switch req.To {
	case ResetEarliest:
		return c.partitions.LogStartOffset(topic, p)
	case ResetLatest:
		return c.partitions.HighWatermark(topic, p)
	case ResetTimestamp:
		return c.partitions.OffsetForTimestamp(topic, p, *req.Timestamp)
	}
	start, err := c.partitions.LogStartOffset(topic, p)
	if err != nil {
		return 0, err
	}
	hw, err := c.partitions.HighWatermark(topic, p)
	if err != nil {
		return 0, err
	}
	return min(max(*req.Offset, start), hw), nil
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
