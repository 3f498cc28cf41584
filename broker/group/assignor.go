package group

import (
	"fmt"
	"slices"
	"sort"

	"github.com/kairolog/kairolog/broker/api"
)

// Assignment strategies.
const (
	// StrategyRange splits each topic's partitions into contiguous ranges,
	// one per subscribed member in member-id order; the first
	// partitions%members members get one extra (Kafka's RangeAssignor, and
	// the original broker's assignment engine).
	StrategyRange = "range"
	// StrategyRoundRobin deals all subscribed partitions, sorted by topic and
	// partition, to the members in member-id order, skipping members not
	// subscribed to a partition's topic (Kafka's RoundRobinAssignor).
	StrategyRoundRobin = "roundrobin"
)

// ValidStrategy says whether s names an assignment strategy.
func ValidStrategy(s string) bool { return s == StrategyRange || s == StrategyRoundRobin }

// TopicPartitions is a topic and some of its partitions, ascending (the
// core's vocabulary, as the front doors answer it).
type TopicPartitions = api.TopicPartitions

// Assignment is the partitions given to one member (member_id, topics).
type Assignment = api.Assignment

// Subscription is a member and the topics it consumes.
type Subscription struct {
	MemberID string
	Topics   []string
}

// AssignPartitions distributes the partitions of the subscribed topics over
// members with the named strategy. partitions gives each topic's partition
// count; topics missing from it (or with no partitions) are skipped. The
// result has one entry per member, sorted by member id, each with its topics
// sorted and partitions ascending; a member that gets nothing has no topics.
// The same input always gives the same output.
func AssignPartitions(strategy string, members []Subscription, partitions map[string]int32) ([]Assignment, error) {
	if strategy == "" {
		strategy = StrategyRange
	}
	if !ValidStrategy(strategy) {
		return nil, fmt.Errorf("%w: unknown assignment strategy %q", ErrInvalidArgument, strategy)
	}
	subs := make(map[string][]string, len(members))
	ids := make([]string, 0, len(members))
	for _, m := range members {
		if _, dup := subs[m.MemberID]; dup {
			return nil, fmt.Errorf("%w: member %q listed twice", ErrInvalidArgument, m.MemberID)
		}
		topics := slices.Clone(m.Topics)
		slices.Sort(topics)
		subs[m.MemberID] = slices.Compact(topics)
		ids = append(ids, m.MemberID)
	}
	sort.Strings(ids)

	got := make(map[string]map[string][]int32, len(ids))
	for _, id := range ids {
		got[id] = map[string][]int32{}
	}
	if strategy == StrategyRange {
		assignRange(ids, subs, partitions, got)
	} else {
		assignRoundRobin(ids, subs, partitions, got)
	}

	out := make([]Assignment, 0, len(ids))
	for _, id := range ids {
		out = append(out, Assignment{MemberID: id, Topics: toTopicPartitions(got[id])})
	}
	return out, nil
}

// subscribedTopics lists, sorted, the topics that have partitions and at
// least one subscriber.
func subscribedTopics(subs map[string][]string, partitions map[string]int32) []string {
	var topics []string
	for _, ts := range subs {
		for _, t := range ts {
			if partitions[t] > 0 {
				topics = append(topics, t)
			}
		}
	}
	slices.Sort(topics)
	return slices.Compact(topics)
}

func assignRange(ids []string, subs map[string][]string, partitions map[string]int32, got map[string]map[string][]int32) {
	for _, topic := range subscribedTopics(subs, partitions) {
		var consumers []string // in id order, since ids is sorted
		for _, id := range ids {
			if slices.Contains(subs[id], topic) {
				consumers = append(consumers, id)
			}
		}
		n, m := int(partitions[topic]), len(consumers)
		per, extra := n/m, n%m
		start := 0
		for i, id := range consumers {
			size := per
			if i < extra {
				size++
			}
			for p := start; p < start+size; p++ {
				got[id][topic] = append(got[id][topic], int32(p))
			}
			start += size
		}
	}
}

func assignRoundRobin(ids []string, subs map[string][]string, partitions map[string]int32, got map[string]map[string][]int32) {
	next := 0
	for _, topic := range subscribedTopics(subs, partitions) {
		for p := int32(0); p < partitions[topic]; p++ {
			// Some member subscribes to topic, so this finds one within len(ids) steps.
			for !slices.Contains(subs[ids[next]], topic) {
				next = (next + 1) % len(ids)
			}
			got[ids[next]][topic] = append(got[ids[next]][topic], p)
			next = (next + 1) % len(ids)
		}
	}
}

// toTopicPartitions turns topic -> partitions into a sorted list.
func toTopicPartitions(m map[string][]int32) []TopicPartitions {
	out := make([]TopicPartitions, 0, len(m))
	for t, ps := range m {
		ps = slices.Clone(ps)
		slices.Sort(ps)
		out = append(out, TopicPartitions{Topic: t, Partitions: ps})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Topic < out[j].Topic })
	return out
}

// cloneTopicPartitions deep-copies tps; never nil.
func cloneTopicPartitions(tps []TopicPartitions) []TopicPartitions {
	out := make([]TopicPartitions, 0, len(tps))
	for _, tp := range tps {
		out = append(out, TopicPartitions{Topic: tp.Topic, Partitions: append([]int32{}, tp.Partitions...)})
	}
	return out
}

// cloneAssignments deep-copies as; never nil.
func cloneAssignments(as []Assignment) []Assignment {
	out := make([]Assignment, 0, len(as))
	for _, a := range as {
		out = append(out, Assignment{MemberID: a.MemberID, Topics: cloneTopicPartitions(a.Topics)})
	}
	return out
}
