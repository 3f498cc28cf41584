package core

import (
	"context"
	"fmt"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// ElectPreferredLeaders moves the leadership of the partitions named
// (every partition when none are) back to their preferred replicas
// through the controller, and answers each partition named, in order; for
// every partition, only those it had to elect (Kafka's ElectLeaders).
func (b *Broker) ElectPreferredLeaders(ctx context.Context, partitions []api.TopicPartition) ([]api.LeaderElection, error) {
	tps := make([]metadata.TopicPartition, len(partitions))
	for i, p := range partitions {
		tps[i] = metadata.TopicPartition{Topic: p.Topic, Partition: int(p.Partition)}
	}
	elections, err := b.node.ElectPreferred(ctx, tps)
	if err != nil {
		return nil, apiError(err)
	}
	out := make([]api.LeaderElection, len(elections))
	for i, e := range elections {
		le := api.LeaderElection{Topic: e.Topic, Partition: int32(e.Partition)}
		if e.Leader != metadata.NoLeader {
			leader := int32(e.Leader)
			le.Leader = &leader
		}
		switch e.Outcome {
		case cluster.Elected:
		case cluster.ElectionNotNeeded:
			le.Code, le.Error = api.CodeElectionNotNeeded, "the preferred replica leads already"
		case cluster.PreferredNotAvailable:
			le.Code, le.Error = api.CodePreferredLeaderNotAvailable, "the preferred replica is not alive, not in sync, or leaving"
		case cluster.ElectionUnknownTopic:
			le.Code, le.Error = api.CodeUnknownTopic, fmt.Sprintf("topic %q does not exist", e.Topic)
		default:
			le.Code, le.Error = api.CodeUnknownPartition, fmt.Sprintf("topic %q has no partition %d", e.Topic, e.Partition)
		}
		out[i] = le
	}
	return out, nil
}

// ElectTopicLeaders is ElectPreferredLeaders for partitions of one topic
// (every one of them when none are named), answering each: the HTTP
// API's POST /topics/{name}/elect-leaders. An unknown topic fails the
// whole request.
func (b *Broker) ElectTopicLeaders(ctx context.Context, topic string, partitions []int32) ([]api.LeaderElection, error) {
	if len(partitions) == 0 {
		t := b.node.Image().Topic(topic)
		if t == nil {
			return nil, api.Errorf(api.CodeUnknownTopic, "topic %q does not exist", topic)
		}
		for i := range t.Partitions {
			partitions = append(partitions, int32(i))
		}
	}
	tps := make([]api.TopicPartition, len(partitions))
	for i, p := range partitions {
		tps[i] = api.TopicPartition{Topic: topic, Partition: p}
	}
	out, err := b.ElectPreferredLeaders(ctx, tps)
	if err == nil && len(out) > 0 && out[0].Code == api.CodeUnknownTopic {
		return nil, api.Errorf(api.CodeUnknownTopic, "topic %q does not exist", topic)
	}
	return out, err
}
