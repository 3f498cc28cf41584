package broker

import (
	"sync/atomic"

	"github.com/kairolog/kairolog/broker/client"
)

// keyPartition is Kafka's default partitioner for a keyed record
// (client.KeyPartition: murmur2 of the key, as Kafka clients compute it).
func keyPartition(key []byte, partitions int32) int32 {
	return client.KeyPartition(key, partitions)
}

// roundRobin spreads keyless records over a topic's partitions.
type roundRobin struct{ next atomic.Uint32 }

func (r *roundRobin) pick(partitions int32) int32 {
	return int32((r.next.Add(1) - 1) % uint32(partitions))
}
