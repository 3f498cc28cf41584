package core

import (
	"context"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// Topology is the cluster as this broker's metadata image has it: every
// broker with its advertised Kafka listener, the controller, and every
// topic's partition placement. It asks no other broker, so a client may
// call it as often as it routes.
func (b *Broker) Topology(ctx context.Context) (api.Topology, error) {
	img := b.image()
	out := api.Topology{ClusterID: img.ClusterID, ControllerID: int32(b.node.ControllerID())}
	for _, id := range img.BrokerIDs() {
		br := img.Broker(id)
		out.Brokers = append(out.Brokers, api.BrokerEndpoint{ID: int32(id), KafkaAddress: br.KafkaAddress,
			Rack: br.Rack, Fenced: br.Fenced})
	}
	for _, name := range img.TopicNames() {
		out.Topics = append(out.Topics, topicPlacement(img, img.Topic(name)))
	}
	return out, nil
}

func topicPlacement(img *metadata.Image, t *metadata.Topic) api.TopicPlacement {
	tp := api.TopicPlacement{Name: t.Name, TopicID: t.ID, Internal: t.Internal,
		Partitions: make([]api.PartitionPlacement, len(t.Partitions))}
	for i, p := range t.Partitions {
		pp := api.PartitionPlacement{Partition: int32(p.ID), Leader: int32(p.Leader), LeaderEpoch: int32(p.LeaderEpoch),
			Replicas: int32s(p.Replicas), ISR: int32s(p.ISR)}
		if p.Leader == metadata.NoLeader {
			pp.Leader = api.NoLeader
		}
		for _, r := range p.Replicas {
			if !img.Live(r) {
				pp.Offline = append(pp.Offline, int32(r))
			}
		}
		tp.Partitions[i] = pp
	}
	return tp
}

// AutoCreateTopic creates a topic a client named before producing to it
// (Kafka's Metadata with auto creation allowed), with the broker's
// defaults, when auto.create.topics.enable is set; otherwise the topic
// stays unknown (UNKNOWN_TOPIC). A topic that exists meanwhile is no error.
func (b *Broker) AutoCreateTopic(ctx context.Context, name string) error {
	if !b.settings.AutoCreateTopics {
		return errUnknownTopic(name)
	}
	_, err := b.CreateTopic(ctx, api.CreateTopicRequest{Name: name})
	if api.IsCode(err, api.CodeTopicAlreadyExists) {
		return nil
	}
	return err
}

// topicByNameOrID is the topic a request names, by its id when it gives
// one (a Kafka client that names topics by id), else by its name.
func topicByNameOrID(img *metadata.Image, name, id string) (*metadata.Topic, error) {
	if id == "" {
		if t := img.Topic(name); t != nil {
			return t, nil
		}
		return nil, errUnknownTopic(name)
	}
	for _, n := range img.TopicNames() {
		if t := img.Topic(n); t.ID == id {
			if name != "" && name != t.Name {
				break
			}
			return t, nil
		}
	}
	return nil, api.Errorf(api.CodeUnknownTopic, "no topic has id %s", id)
}
