package core

import "sync/atomic"

// roundRobin spreads keyless records over a topic's partitions. (Keyed
// records go where Kafka's default partitioner puts them: api.KeyPartition.)
type roundRobin struct{ next atomic.Uint32 }

func (r *roundRobin) pick(partitions int32) int32 {
	return int32((r.next.Add(1) - 1) % uint32(partitions))
}
