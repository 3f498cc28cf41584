package replica

import (
	"fmt"
	"testing"
	"time"
)

// publishTopics publishes, as one metadata change, topics t0..t<n-1> of
// partitions partitions each on brokers 0..replicas-1, the leaders spread
// over them.
func publishTopics(c *memCluster, n int, partitions, replicas int32) {
	c.hold(true)
	for i := range n {
		for p := range partitions {
			rs := make([]int32, replicas)
			for r := range rs {
				rs[r] = int32(r)
			}
			c.set(PartitionState{
				Topic: fmt.Sprintf("t%d", i), TopicID: fmt.Sprintf("id-%d", i), Partition: p, Replicas: rs,
				Leader: (int32(i) + p) % replicas, LeaderEpoch: 1, ISR: rs, PartitionEpoch: 1,
			})
		}
	}
	c.hold(false)
}

// awaitLeaders waits until every broker hosts its replicas of every
// partition of c and the leader of each serves it.
func awaitLeaders(t testing.TB, c *memCluster, bs []*testBroker) {
	t.Helper()
	states, _, _ := c.Partitions()
	eventually(t, 60*time.Second, "every partition's leader to serve", func() bool {
		for _, st := range states {
			for _, r := range st.Replicas {
				i, err := bs[r].manager().PartitionInfo(st.Topic, st.Partition)
				if err != nil || i.IsLeader != (r == st.Leader) {
					return false
				}
			}
		}
		return true
	})
}

// BenchmarkOpenReplicas measures how fast three in-process brokers open
// the replicas of many new partitions (three replicas each) that reach
// them in one metadata change, as a burst of topic creations does: from
// the change until every broker hosts its replicas and every leader
// serves. Opening is mostly fsyncs, so the figure is the disk's.
//
//	go test ./broker/replica -run '^$' -bench OpenReplicas -benchtime 1x
func BenchmarkOpenReplicas(b *testing.B) {
	for _, partitions := range []int{300, 3000} {
		b.Run(fmt.Sprintf("partitions=%d", partitions), func(b *testing.B) {
			var total time.Duration
			for range b.N {
				b.StopTimer()
				c := newMemCluster()
				bs := startBrokers(b, c, 3, nil)
				b.StartTimer()
				start := time.Now()
				publishTopics(c, partitions/3, 3, 3)
				awaitLeaders(b, c, bs)
				total += time.Since(start)
				b.StopTimer()
				for _, tb := range bs {
					tb.stop(b)
				}
			}
			b.ReportMetric(float64(3*partitions*b.N)/total.Seconds(), "replicas/s")
		})
	}
}
