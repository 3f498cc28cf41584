package scale

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkIdleCost: an idle three-broker cluster at replication factor 3
// with 300 and 3000 partitions (100 and 1000 topics of 3), every partition
// in sync and nothing produced. It reports the CPU the three brokers use
// together, in % of one core (cpu-%core), and the peer requests the
// busiest broker receives per second (peer-req/s), with each broker's
// requests by operation in the log. One case is one cluster measured
// once, whatever b.N is: run it with -benchtime 1x.
func BenchmarkIdleCost(b *testing.B) {
	var counts []int
	for _, s := range strings.Split(envOr("KAIRO_BENCH_PARTITIONS", "300,3000"), ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 3 || n%3 != 0 {
			// The cluster holds n/3 topics of 3 partitions each.
			b.Fatalf("KAIRO_BENCH_PARTITIONS: %q is not a multiple of 3", s)
		}
		counts = append(counts, n)
	}
	window := envDuration("KAIRO_BENCH_IDLE", 30*time.Second)
	bins := binaries(b)
	for _, partitions := range counts {
		for round := range envInt("KAIRO_BENCH_ROUNDS", 1) {
			for _, bin := range inRoundOrder(bins, round) {
				b.Run(fmt.Sprintf("partitions=%d/broker=%s/round=%d", partitions, bin.name, round+1), func(b *testing.B) {
					measureIdle(b, bin, partitions, window)
				})
			}
		}
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func measureIdle(b *testing.B, bin binary, partitions int, window time.Duration) {
	bc := startCluster(b, bin, nil, true)
	c := bc.Client(0)
	start := time.Now()
	createTopics(b, c, "idle", partitions/3, 3, nil)
	created := time.Since(start)
	inSync := waitInSync(b, c, "idle-", partitions, 10*time.Minute)
	time.Sleep(15 * time.Second) // settle: ISR changes, checkpoints, first sessions

	load := loadAverage()
	b.ResetTimer()
	cpu0, req0 := bc.cpu(), bc.peerRequests()
	profiled := bc.profile(b, fmt.Sprintf("idle-%s-%d", bin.name, partitions), window)
	time.Sleep(window)
	cpu1, req1 := bc.cpu(), bc.peerRequests()
	b.StopTimer()
	profiled()

	var total time.Duration
	perBroker := make([]string, 3)
	for i := range 3 {
		d := cpu1[i] - cpu0[i]
		total += d
		perBroker[i] = fmt.Sprintf("%.1f%%", 100*d.Seconds()/window.Seconds())
	}
	cpuPct := 100 * total.Seconds() / window.Seconds()
	b.Logf("idle %s, %d partitions RF 3 (and __consumer_offsets): created in %v, all in sync %v later; load average %s",
		bin.name, partitions, created.Round(time.Second), inSync.Round(time.Second), load)
	b.Logf("idle %s, %d partitions: cluster CPU %.1f%% of one core (brokers %s) over %v",
		bin.name, partitions, cpuPct, strings.Join(perBroker, ", "), window)
	var busiest float64
	for i := range 3 {
		var n int64
		var ops []string
		for path, v := range req1[i] {
			d := v - req0[i][path]
			n += d
			if d > 0 {
				ops = append(ops, fmt.Sprintf("%s %.1f/s", strings.TrimPrefix(path, "/internal/"), float64(d)/window.Seconds()))
			}
		}
		sort.Strings(ops)
		rate := float64(n) / window.Seconds()
		busiest = max(busiest, rate)
		b.Logf("idle %s, %d partitions: broker %d received %.1f peer requests/s (%s)",
			bin.name, partitions, i, rate, strings.Join(ops, ", "))
	}
	b.ReportMetric(cpuPct, "cpu-%core")
	b.ReportMetric(busiest, "peer-req/s")
	b.ReportMetric(0, "ns/op")
}
