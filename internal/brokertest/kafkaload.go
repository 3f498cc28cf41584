package brokertest

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ProduceKafka produces n records of size bytes with a kgo client of its
// own, round robin over the topic's partitions, and waits for every
// acknowledgement. The client is franz-go's default producer (idempotent,
// acks=all, snappy batches of up to 1 MB) unless opts say otherwise:
// kgo.RequiredAcks(kgo.LeaderAck()) with kgo.DisableIdempotentWrite(),
// TLS, SASL. It is the load of the Kafka-protocol benchmarks.
func ProduceKafka(seeds []string, topic string, n, size int, opts ...kgo.Opt) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.RoundRobinPartitioner())}, opts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx := context.Background()
	value := make([]byte, size)
	var errOnce sync.Once
	var firstErr error
	for range n {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				errOnce.Do(func() { firstErr = err })
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	return firstErr
}
