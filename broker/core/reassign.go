package core

import (
	"context"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster"
)

// ReassignPartitions starts, replaces or cancels partition reassignments
// through the controller and answers each partition in the order asked
// (Kafka's AlterPartitionReassignments).
func (b *Broker) ReassignPartitions(ctx context.Context, partitions []api.PartitionReassignment) ([]api.ReassignmentAnswer, error) {
	req := make([]cluster.PartitionReassignment, len(partitions))
	for i, p := range partitions {
		req[i] = cluster.PartitionReassignment{Topic: p.Topic, Partition: int(p.Partition), Replicas: ints(p.Replicas), Cancel: p.Cancel,
			KeepReplicationFactor: p.KeepReplicationFactor}
	}
	answers, err := b.node.ReassignPartitions(ctx, req)
	if err != nil {
		return nil, apiError(err)
	}
	out := make([]api.ReassignmentAnswer, len(answers))
	for i, a := range answers {
		out[i] = api.ReassignmentAnswer{Topic: a.Topic, Partition: int32(a.Partition), Error: a.Message, Code: a.Code,
			Replicas: int32s(a.Replicas), Adding: int32s(a.Adding), Removing: int32s(a.Removing)}
	}
	return out, nil
}

// Reassignments lists the partitions being reassigned, of the topics
// named or of every topic (Kafka's ListPartitionReassignments).
func (b *Broker) Reassignments(_ context.Context, topics []string) ([]api.Reassignment, error) {
	var out []api.Reassignment
	for _, r := range b.node.Reassignments(topics) {
		out = append(out, api.Reassignment{Topic: r.Topic, Partition: int32(r.Partition),
			Replicas: int32s(r.Replicas), Adding: int32s(r.Adding), Removing: int32s(r.Removing)})
	}
	return out, nil
}
