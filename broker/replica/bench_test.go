package replica

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/storage"
)

// BenchmarkProduce measures produce latency and throughput on a partition
// with three in-process replicas talking over HTTP on 127.0.0.1: one
// record of 100 bytes per produce, acks=1 against acks=all, from one
// producer and from sixteen concurrent producers.
func BenchmarkProduce(b *testing.B) {
	for _, tc := range []struct {
		name string
		acks Acks
	}{{"acks=1", AcksLeader}, {"acks=all", AcksAll}} {
		for _, producers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/producers=%d", tc.name, producers), func(b *testing.B) {
				c := newMemCluster()
				bs := startBrokers(b, c, 3, nil)
				threeReplicas(c, "bench", map[string]string{"min.insync.replicas": "2"})
				waitLeader(b, bs[0], "bench")
				m := bs[0].manager()
				value := make([]byte, 100)
				b.SetBytes(int64(len(value)))
				var issued atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				start := time.Now()
				for range producers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for issued.Add(1) <= int64(b.N) {
							rec := []storage.Record{{Value: value}}
							if _, _, err := m.Produce(context.Background(), "bench", 0, rec, tc.acks, 10*time.Second); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
			})
		}
	}
}
