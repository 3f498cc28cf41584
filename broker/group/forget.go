package group

import (
	"context"
	"fmt"
	"slices"
)

// consumerProtocolType is the protocol type of Kafka's consumers, whose
// subscriptions the coordinator knows (the Kafka listener reads them from
// each member's protocol metadata).
const consumerProtocolType = "consumer"

// DeleteOffsets deletes a group's committed offsets of the given
// partitions, in one journal record (Kafka's OffsetDelete). It answers one
// error per partition, in their order: nil when the offset is gone (or
// none was committed), ErrGroupSubscribedToTopic when a member of the
// group consumes the partition's topic, since its next commit would bring
// the offset back; the others' offsets are deleted all the same. A group
// the coordinator does not hold is ErrUnknownGroup.
//
// A member consumes a topic when it is in its subscription (a member that
// joined a generation) or, for the members of the original API, when the
// group has a saved assignment of it. A group whose members assign under
// another protocol type than Kafka's consumer (Kafka Connect's, say) does
// not say which topics they read: while it has members the request is
// ErrNonEmptyGroup, as in Kafka.
func (c *Coordinator) DeleteOffsets(ctx context.Context, groupID string, tps []TopicPartition) ([]error, error) {
	gid, err := cleanName("group", groupID)
	if err != nil {
		return nil, err
	}
	if len(tps) == 0 {
		return nil, fmt.Errorf("%w: no partitions to delete offsets of", ErrInvalidArgument)
	}
	g, err := c.lockGroup(gid, false)
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, fmt.Errorf("%w: group %q does not exist", ErrUnknownGroup, gid)
	}
	defer c.unlockGroup(g)
	if g.protocolType != "" && g.protocolType != consumerProtocolType && len(g.members) > 0 {
		return nil, fmt.Errorf("%w: group %q of protocol type %q has members", ErrNonEmptyGroup, gid, g.protocolType)
	}
	errs := make([]error, len(tps))
	rec := &record{Type: recForget, TS: toMs(c.now())}
	for i, tp := range tps {
		if g.consumes(tp.Topic) {
			errs[i] = fmt.Errorf("%w: a member of group %q consumes topic %q", ErrGroupSubscribedToTopic, gid, tp.Topic)
			continue
		}
		if _, ok := g.offsets[tp]; ok {
			rec.Offsets = append(rec.Offsets, recOffset{Topic: tp.Topic, Partition: tp.Partition})
		}
	}
	if len(rec.Offsets) == 0 {
		return errs, nil
	}
	return errs, c.write(ctx, g, rec)
}

// consumes reports whether a member of g consumes topic: see DeleteOffsets.
func (g *group) consumes(topic string) bool {
	simple := false
	for _, m := range g.members {
		if m.transient {
			continue
		}
		if m.protocol && slices.Contains(m.topics, topic) {
			return true
		}
		simple = simple || !m.protocol
	}
	_, saved := g.saved[topic]
	return simple && saved
}
