package group

import (
	"context"
	"fmt"
	"strings"

	"github.com/kairolog/kairolog/broker/api"
)

// Partitions is what the coordinator reads from the broker's logs: topic
// sizes for validation and assignment, offsets for lag and offset resets.
// Topic sizes come from the broker's metadata and are read under a group's
// lock; offsets come from each partition's leader, often another broker,
// so they are read without one and under the request's context.
// Offset methods return an error wrapping ErrUnknownTopic or
// ErrUnknownPartition for a partition that does not exist.
type Partitions interface {
	// PartitionCount returns the number of partitions of topic and whether
	// the topic exists.
	PartitionCount(topic string) (int32, bool)
	// Bounds returns a partition's offsets as its leader sees them.
	Bounds(ctx context.Context, topic string, partition int32) (Bounds, error)
	// OffsetForTimestamp is the first offset whose record timestamp (Unix
	// ms) is at or after timestampMs, or the high watermark if none is.
	OffsetForTimestamp(ctx context.Context, topic string, partition int32, timestampMs int64) (int64, error)
}

// Bounds are a partition's offsets.
type Bounds struct {
	// LogStartOffset is the first offset still stored.
	LogStartOffset int64
	// HighWatermark is the end of what consumers may read.
	HighWatermark int64
	// LogEndOffset is the offset the next record will get.
	LogEndOffset int64
}

// NoGeneration is the Generation of an unfenced commit.
const NoGeneration = api.NoGeneration

// maxMetadataLen bounds a commit's metadata (Kafka's offset.metadata.max.bytes).
const maxMetadataLen = 4096

// OffsetCommit is one committed position: topic, partition, offset,
// metadata (the core's vocabulary).
type OffsetCommit = api.OffsetCommit

// CommitRequest commits offsets for a group. With MemberID empty and
// Generation NoGeneration the commit is unfenced and always accepted (the
// original POST /offsets/commit). Otherwise it is fenced: the member must be
// a protocol member (ErrUnknownMember) of the group's current generation
// (ErrIllegalGeneration). A fenced commit is accepted during a rebalance, so
// that an eager consumer can commit what it consumed before rejoining.
type CommitRequest struct {
	Group      string
	MemberID   string
	Generation int32
	Offsets    []OffsetCommit
}

// CommitOffsets validates and stores offsets, all or none, in one journal
// record. Topics and partitions must exist (ErrUnknownTopic,
// ErrUnknownPartition). A negative offset clears the partition's
// committed offset: it is a Kafka client's "none" (kafkajs's resetOffsets
// commits -2, the earliest, for a consumer to start over), every Kafka
// client reads a negative committed offset as none and starts from its
// reset policy, and Kafka's brokers take it; the HTTP API refuses one.
func (c *Coordinator) CommitOffsets(ctx context.Context, req CommitRequest) error {
	gid, err := cleanName("group", req.Group)
	if err != nil {
		return err
	}
	if len(req.Offsets) == 0 {
		return fmt.Errorf("%w: no offsets to commit", ErrInvalidArgument)
	}
	rec := &record{Type: recOffsets}
	for _, o := range req.Offsets {
		topic, err := c.checkPartition(o.Topic, o.Partition)
		if err != nil {
			return err
		}
		if len(o.Metadata) > maxMetadataLen {
			return fmt.Errorf("%w: metadata is longer than %d bytes", ErrInvalidArgument, maxMetadataLen)
		}
		rec.Offsets = append(rec.Offsets, recOffset{Topic: topic, Partition: o.Partition, Offset: o.Offset, Metadata: o.Metadata})
	}

	fenced := req.MemberID != "" || req.Generation != NoGeneration
	g, err := c.lockGroup(gid, !fenced)
	if err != nil {
		return err
	}
	if g == nil {
		return fmt.Errorf("%w: member %q is not in group %q", ErrUnknownMember, req.MemberID, gid)
	}
	defer c.unlockGroup(g)
	if fenced {
		m := g.members[strings.TrimSpace(req.MemberID)]
		switch {
		case m == nil || m.transient:
			return fmt.Errorf("%w: member %q is not in group %q", ErrUnknownMember, req.MemberID, gid)
		case !m.protocol || req.Generation != g.generation:
			return illegalGeneration(g, m, req.Generation)
		}
	}
	rec.TS = toMs(c.now())
	return c.write(ctx, g, rec)
}

// checkPartition trims a topic name and checks the partition exists.
func (c *Coordinator) checkPartition(topic string, partition int32) (string, error) {
	topic, err := cleanName("topic", topic)
	if err != nil {
		return "", err
	}
	n, ok := c.partitions.PartitionCount(topic)
	if !ok {
		return "", fmt.Errorf("%w: topic %q does not exist", ErrUnknownTopic, topic)
	}
	if partition < 0 || partition >= n {
		return "", fmt.Errorf("%w: topic %q has no partition %d", ErrUnknownPartition, topic, partition)
	}
	return topic, nil
}

// Offset returns a committed offset and whether there is one (the original
// GET /offsets).
func (c *Coordinator) Offset(groupID, topic string, partition int32) (OffsetCommit, bool, error) {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return OffsetCommit{}, false, err
	}
	if topic, err = cleanName("topic", topic); err != nil {
		return OffsetCommit{}, false, err
	}
	if partition < 0 {
		return OffsetCommit{}, false, fmt.Errorf("%w: partition %d is negative", ErrInvalidArgument, partition)
	}
	miss := OffsetCommit{Topic: topic, Partition: partition}
	g, err := c.lockGroup(gid, false)
	if err != nil || g == nil {
		return miss, false, err
	}
	defer c.unlockGroup(g)
	co, ok := g.offsets[TopicPartition{topic, partition}]
	if !ok {
		return miss, false, nil
	}
	return OffsetCommit{Topic: topic, Partition: partition, Offset: co.offset, Metadata: co.metadata}, true, nil
}

// Offsets returns every committed offset of a group, sorted by topic and
// partition; none for an unknown group.
func (c *Coordinator) Offsets(groupID string) ([]OffsetCommit, error) {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return nil, err
	}
	out := []OffsetCommit{}
	g, err := c.lockGroup(gid, false)
	if err != nil || g == nil {
		return out, err
	}
	defer c.unlockGroup(g)
	return g.committedOffsets(), nil
}

func (g *group) committedOffsets() []OffsetCommit {
	tps := make([]TopicPartition, 0, len(g.offsets))
	for tp := range g.offsets {
		tps = append(tps, tp)
	}
	sortTPs(tps)
	out := make([]OffsetCommit, 0, len(tps))
	for _, tp := range tps {
		co := g.offsets[tp]
		out = append(out, OffsetCommit{Topic: tp.Topic, Partition: tp.Partition, Offset: co.offset, Metadata: co.metadata})
	}
	return out
}
