package scale

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/client"
)

// BenchmarkCatchUp: three brokers, 1000 partitions at RF 3 (100 topics of
// 10); broker 2 is stopped, the other two take KAIRO_BENCH_CATCHUP_MB
// (default 1024) MiB in 1 KiB records spread evenly over every partition, and broker 2 is
// started again. It reports the time from the start until every
// partition has every replica in its ISR again (catchup-s), and the rate
// broker 2 copied at (catchup-MiB/s). Run it with -benchtime 1x.
func BenchmarkCatchUp(b *testing.B) {
	const topics, perTopic = 100, 10
	mb := envInt("KAIRO_BENCH_CATCHUP_MB", 1024)
	for _, bin := range binaries(b) {
		b.Run("broker="+bin.name, func(b *testing.B) {
			bc := startCluster(b, bin, nil, true)
			c := bc.Client(0)
			names := createTopics(b, c, "catchup", topics, perTopic, map[string]string{"min.insync.replicas": "1"})
			waitInSync(b, c, "catchup-", topics*perTopic, 10*time.Minute)
			if err := bc.Stop(2); err != nil {
				b.Fatal(err)
			}

			// Records of 1 KiB, at most 1000 per request, each request
			// to one partition, every partition taking as many.
			value := strings.Repeat("x", 1024)
			perRequest := min(1000, max(1, mb*1024/(topics*perTopic)))
			rounds := max(1, mb*1024/perRequest/(topics*perTopic))
			start := time.Now()
			parallel(b, rounds*topics*perTopic, 8, func(i int) error {
				p := int32(i % perTopic)
				req := client.ProduceRequest{Topic: names[(i/perTopic)%topics], Acks: "1", Records: make([]client.ProduceRecord, perRequest)}
				for j := range req.Records {
					req.Records[j] = client.ProduceRecord{Partition: &p, Value: value}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				_, err := c.Produce(ctx, req)
				return err
			})
			produced := time.Since(start)
			bytes := float64(rounds*topics*perTopic*perRequest*len(value)) / (1 << 20)
			b.Logf("catch-up %s: %.0f MiB into %d partitions with broker 2 stopped in %v", bin.name, bytes, topics*perTopic, produced.Round(time.Second))

			// Broker 2 has left every ISR (replica.lag.time.max.ms after it
			// stopped) before it comes back.
			waitISRWithout(b, c, "catchup-", 2, 5*time.Minute)

			b.ResetTimer()
			restart := time.Now()
			if err := bc.Start(2); err != nil {
				b.Fatal(err)
			}
			waitInSync(b, c, "catchup-", topics*perTopic, 30*time.Minute)
			took := time.Since(restart)
			b.StopTimer()
			b.Logf("catch-up %s: broker 2 restarted and back in every ISR after %v (%.1f MiB/s); load average %s",
				bin.name, took.Round(time.Second), bytes/took.Seconds(), loadAverage())
			b.ReportMetric(took.Seconds(), "catchup-s")
			b.ReportMetric(bytes/took.Seconds(), "catchup-MiB/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// waitISRWithout waits until no partition of the topics named prefix… has
// broker in its ISR.
func waitISRWithout(t testing.TB, c *client.Client, prefix string, broker int32, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		md, err := c.Metadata(ctx)
		cancel()
		in := 0
		if err == nil {
			for _, tp := range md.Topics {
				for _, p := range tp.Partitions {
					if strings.HasPrefix(tp.Name, prefix) && slices.Contains(p.ISR, broker) {
						in++
					}
				}
			}
			if in == 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v broker %d is still in %d ISRs (%v)", timeout, broker, in, err)
		}
		time.Sleep(time.Second)
	}
}
