package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kairolog/kairolog/internal/brokertest"
)

// The Kafka-protocol benchmarks: the same kgo client (idempotent, acks=all,
// franz-go's defaults otherwise: snappy batches, up to 1 MB) produces and
// then consumes 100-byte records, against franz-go's kfake (its disk
// persistence on) and against KairoLog brokers, alternating within one run.
// Each figure is records per second and MB/s of record values.
//
//	go test ./test/kafka/ -run '^$' -bench 'BenchmarkKafka' -benchtime 200000x -count 3
//
// docs/benchmarks.md has the figures of this machine.

// benchRecordSize is the value size of franz-go's examples/bench default.
const benchRecordSize = 100

// benchPartitions is the benchmarked topic's partition count.
const benchPartitions = 3

// BenchmarkKafka runs produce then consume against each server.
func BenchmarkKafka(b *testing.B) {
	servers := []struct {
		name  string
		start func(b *testing.B) []string
		rf    int16
	}{
		{"kfake", startKfake, 1},
		{"kairolog-1", func(b *testing.B) []string { return startBenchBrokers(b, 1) }, 1},
		{"kairolog-3-rf3", func(b *testing.B) []string { return startBenchBrokers(b, 3) }, 3},
	}
	for _, s := range servers {
		b.Run(s.name, func(b *testing.B) {
			seeds := s.start(b)
			topic := createBenchTopic(b, seeds, s.rf)
			b.Run("produce", func(b *testing.B) { benchProduce(b, seeds, topic) })
			b.Run("consume", func(b *testing.B) { benchConsume(b, seeds, topic) })
		})
	}
}

// startKfake starts a kfake cluster of one broker that persists to disk.
func startKfake(b *testing.B) []string {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DataDir(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c.ListenAddrs()
}

// startBenchBrokers starts n KairoLog broker processes.
func startBenchBrokers(b *testing.B, n int) []string {
	c := startCluster(b, n, nil)
	return c.KafkaAddresses()
}

// createBenchTopic creates a fresh topic through kadm.
func createBenchTopic(b *testing.B, seeds []string, rf int16) string {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	topic := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, benchPartitions, rf, nil, topic); err != nil {
		b.Fatal(err)
	}
	return topic
}

// benchProduce produces b.N records and waits for every acknowledgement;
// opts are the clients' further options (TLS, SASL).
func benchProduce(b *testing.B, seeds []string, topic string, opts ...kgo.Opt) {
	b.SetBytes(benchRecordSize)
	b.ResetTimer()
	if err := produceN(seeds, topic, b.N, opts...); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// produceN produces n records of benchRecordSize bytes with a client of its
// own, round robin over the partitions, and waits for every acknowledgement.
func produceN(seeds []string, topic string, n int, opts ...kgo.Opt) error {
	return brokertest.ProduceKafka(seeds, topic, n, benchRecordSize, opts...)
}

// benchConsume consumes b.N records from the start of the topic, which the
// produce benchmark filled (topped up here when it holds fewer).
func benchConsume(b *testing.B, seeds []string, topic string, opts ...kgo.Opt) {
	ctx := context.Background()
	top, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	offs, err := kadm.NewClient(top).ListEndOffsets(ctx, topic)
	top.Close()
	if err != nil {
		b.Fatal(err)
	}
	var have int64
	offs.Each(func(o kadm.ListedOffset) { have += o.Offset })
	if missing := int64(b.N) - have; missing > 0 {
		if err := produceN(seeds, topic, int(missing), opts...); err != nil {
			b.Fatal(err)
		}
	}

	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	b.SetBytes(benchRecordSize)
	b.ResetTimer()
	n := 0
	for n < b.N {
		fs := cl.PollFetches(ctx)
		if errs := fs.Errors(); len(errs) > 0 {
			b.Fatal(errs[0].Err)
		}
		n += fs.NumRecords()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
