package core

import (
	"context"
	"sync"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// CreateTopic creates a topic through the controller.
func (b *Broker) CreateTopic(ctx context.Context, spec api.CreateTopicRequest) (*api.CreateTopicResult, error) {
	if spec.Partitions == 0 {
		spec.Partitions = b.settings.NumPartitions
	}
	if spec.ReplicationFactor == 0 {
		spec.ReplicationFactor = b.settings.DefaultReplicationFactor
	}
	if spec.Partitions > b.settings.MaxPartitions {
		return nil, api.Errorf(api.CodeInvalidPartitions, "partitions must be at most %d (max.partitions.per.topic), got %d", b.settings.MaxPartitions, spec.Partitions)
	}
	t, err := b.node.CreateTopic(ctx, cluster.CreateTopicRequest{Name: spec.Name, Partitions: int(spec.Partitions),
		ReplicationFactor: int(spec.ReplicationFactor), Config: spec.Config})
	if err != nil {
		return nil, apiError(err)
	}
	b.awaitLocalLeaders(ctx, t)
	return &api.CreateTopicResult{Name: t.Name, TopicID: t.ID,
		Partitions: int32(len(t.Partitions)), ReplicationFactor: int16(t.ReplicationFactor())}, nil
}

// ListTopics lists topic names, sorted; internal ones only when asked.
func (b *Broker) ListTopics(ctx context.Context, internal bool) ([]string, error) {
	img := b.image()
	out := []string{}
	for _, name := range img.TopicNames() {
		if t := img.Topic(name); t != nil && (internal || !t.Internal) {
			out = append(out, name)
		}
	}
	return out, nil
}

// DescribeTopic describes a topic: placement from the metadata, offsets and
// sizes from each partition's leader (asked once per leading broker).
func (b *Broker) DescribeTopic(ctx context.Context, name string) (*api.TopicDescription, error) {
	t := b.image().Topic(name)
	if t == nil {
		return nil, errUnknownTopic(name)
	}
	return &b.describe(ctx, []*metadata.Topic{t})[0], nil
}

// describe describes topics: placement from the metadata, then offsets and
// sizes from each partition's leader, with one request per leading broker
// for all the partitions it leads, sent to every such broker at once.
func (b *Broker) describe(ctx context.Context, topics []*metadata.Topic) []api.TopicDescription {
	out := make([]api.TopicDescription, len(topics))
	type slot struct{ topic, partition int }
	remote := map[int32][]slot{} // leader → the partitions it leads
	for ti, t := range topics {
		d := api.TopicDescription{Name: t.Name, TopicID: t.ID, Internal: t.Internal,
			PartitionCount: int32(len(t.Partitions)), ReplicationFactor: int16(t.ReplicationFactor()),
			Config: map[string]string{}, Partitions: make([]api.PartitionDescription, len(t.Partitions))}
		for k, v := range t.Config {
			d.Config[k] = v
		}
		for i, p := range t.Partitions {
			pd := api.PartitionDescription{Partition: int32(p.ID), Leader: int32(p.Leader), LeaderEpoch: int32(p.LeaderEpoch),
				Replicas: int32s(p.Replicas), ISR: int32s(p.ISR), UnderReplicated: p.UnderReplicated(),
				HighWatermark: -1, LogEndOffset: -1, LogStartOffset: -1, SizeBytes: -1}
			if len(p.Adding) > 0 {
				pd.Adding = int32s(p.Adding)
			}
			if len(p.Removing) > 0 {
				pd.Removing = int32s(p.Removing)
			}
			d.Partitions[i] = pd
			switch {
			case int32(p.Leader) == b.id || p.Leader < 0 || IsForwarded(ctx):
				b.fillLocal(&d.Partitions[i], t.Name)
			default:
				remote[int32(p.Leader)] = append(remote[int32(p.Leader)], slot{ti, i})
			}
		}
		out[ti] = d
	}
	var wg sync.WaitGroup
	for leader, slots := range remote {
		wg.Go(func() {
			req := partitionsRequest{Partitions: make([]partitionRef, len(slots))}
			for k, s := range slots {
				req.Partitions[k] = partitionRef{Topic: out[s.topic].Name, Partition: out[s.topic].Partitions[s.partition].Partition}
			}
			sizes, err := b.peerPartitions(ctx, leader, req)
			if err != nil {
				b.log.Debug("Asking a leader for partition offsets failed", "leader", leader, "partitions", len(slots), "error", err)
				return
			}
			for _, s := range slots {
				pd := &out[s.topic].Partitions[s.partition]
				if sz, ok := sizes[partitionRef{out[s.topic].Name, pd.Partition}]; ok {
					pd.HighWatermark, pd.LogEndOffset, pd.LogStartOffset, pd.SizeBytes = sz.HighWatermark, sz.LogEndOffset, sz.LogStartOffset, sz.SizeBytes
				}
			}
		})
	}
	wg.Wait()
	return out
}

// fillLocal copies this broker's replica offsets into pd; a partition this
// broker does not host keeps -1.
func (b *Broker) fillLocal(pd *api.PartitionDescription, topic string) {
	info, err := b.replicas.PartitionInfo(topic, pd.Partition)
	if err != nil {
		return
	}
	pd.HighWatermark, pd.LogEndOffset, pd.LogStartOffset, pd.SizeBytes = info.HighWatermark, info.LogEndOffset, info.LogStartOffset, info.SizeBytes
}

// DeleteTopic deletes a topic; every broker removes its replicas as it
// applies the deletion.
func (b *Broker) DeleteTopic(ctx context.Context, name string) error {
	return apiError(b.node.DeleteTopic(ctx, name))
}

// AddPartitions raises a topic's partition count.
func (b *Broker) AddPartitions(ctx context.Context, name string, partitions int32) error {
	if partitions > b.settings.MaxPartitions {
		return api.Errorf(api.CodeInvalidPartitions, "partitions must be at most %d (max.partitions.per.topic), got %d", b.settings.MaxPartitions, partitions)
	}
	t, err := b.node.CreatePartitions(ctx, name, int(partitions))
	if err != nil {
		return apiError(err)
	}
	b.awaitLocalLeaders(ctx, t)
	return nil
}

// AlterTopicConfig changes a topic's overrides and returns them.
func (b *Broker) AlterTopicConfig(ctx context.Context, change api.TopicConfigChange) (map[string]string, error) {
	cfg, err := b.node.AlterConfig(ctx, cluster.AlterConfigRequest{Topic: change.Topic, Set: change.Set, Delete: change.Remove, Replace: change.Replace})
	if err != nil {
		return nil, apiError(err)
	}
	return cfg, nil
}

// SetReplicationFactor starts moving a topic to rf replicas per partition.
func (b *Broker) SetReplicationFactor(ctx context.Context, name string, rf int16) error {
	_, err := b.node.ChangeReplicationFactor(ctx, name, int(rf))
	return apiError(err)
}
