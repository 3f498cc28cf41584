package broker

import (
	"context"

	"github.com/kairolog/kairolog/broker/cluster"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
	"github.com/kairolog/kairolog/broker/replica"
)

// replicaView adapts the cluster node to what the replica manager reads
// (replica.Metadata) and writes (replica.ISRChanger).
type replicaView struct{ node *cluster.Node }

func (v replicaView) Partitions() ([]replica.PartitionState, bool) {
	img := v.node.Image()
	var out []replica.PartitionState
	for _, name := range img.TopicNames() {
		t := img.Topic(name)
		for _, p := range t.Partitions {
			out = append(out, partitionState(t, p))
		}
	}
	return out, v.node.CaughtUp()
}

func partitionState(t *metadata.Topic, p *metadata.Partition) replica.PartitionState {
	return replica.PartitionState{Topic: t.Name, Partition: int32(p.ID), Replicas: int32s(p.Replicas),
		Leader: int32(p.Leader), LeaderEpoch: int32(p.LeaderEpoch), ISR: int32s(p.ISR),
		PartitionEpoch: int32(p.PartitionEpoch), Config: t.Config}
}

func (v replicaView) BrokerAddress(id int32) (string, bool) {
	b := v.node.Image().Broker(int(id))
	if b == nil || b.HTTPAddress == "" {
		return "", false
	}
	return b.HTTPAddress, true
}

// Subscribe turns the node's image channel into the coalescing
// notification channel the replica manager wants.
func (v replicaView) Subscribe() (<-chan struct{}, func()) {
	imgs, unsubscribe := v.node.Subscribe()
	out := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-imgs:
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	stopped := false
	return out, func() {
		if !stopped {
			stopped = true
			close(done)
			unsubscribe()
		}
	}
}

func (v replicaView) AlterISR(ctx context.Context, req replica.AlterISRRequest) (replica.PartitionState, error) {
	p, err := v.node.AlterISR(ctx, metadata.AlterISR{Topic: req.Topic, Partition: int(req.Partition),
		Leader: int(req.LeaderID), LeaderEpoch: int(req.LeaderEpoch), PartitionEpoch: int(req.PartitionEpoch), ISR: ints(req.ISR)})
	if err != nil {
		return replica.PartitionState{}, err
	}
	t := v.node.Image().Topic(req.Topic)
	st := replica.PartitionState{Topic: req.Topic, Partition: int32(p.ID), Replicas: int32s(p.Replicas),
		Leader: int32(p.Leader), LeaderEpoch: int32(p.LeaderEpoch), ISR: int32s(p.ISR), PartitionEpoch: int32(p.PartitionEpoch)}
	if t != nil {
		st.Config = t.Config
	}
	return st, nil
}

func int32s(xs []int) []int32 {
	out := make([]int32, len(xs))
	for i, x := range xs {
		out[i] = int32(x)
	}
	return out
}

func ints(xs []int32) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}
