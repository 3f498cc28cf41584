package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/internal/brokertest"
)

// throughputRecordSize is the value size of every throughput scenario, the
// replicated-cluster section's 200 bytes.
const throughputRecordSize = 200

// throughputScenario is one produce load, run against a fresh topic.
type throughputScenario struct {
	name string
	run  func(bc *benchCluster, topic string) (loadResult, error)
}

// throughputScenarios are the loads of BenchmarkThroughput, acks=all
// beside acks=1 for each: the Kafka listener with kgo (franz-go's
// producer, not idempotent so that acks=1 is allowed, batches of up to
// 1 MB, round robin over the partitions; snappy, its default, and
// uncompressed), and HTTP through broker 0 with kairoctl bench (not
// idempotent, as the replicated-cluster section): batches of 1000 records
// from 8 connections and single records from 32. The batched HTTP load is
// 2 000 000 records (KAIRO_BENCH_HTTP_RECORDS), a few seconds: 500 000
// lasted about one, much of it the connections' and heaps' start. The
// single-record load is 40 000 records (KAIRO_BENCH_SINGLE_RECORDS), about
// ten seconds: at 20 000 one burst of the machine's steal decided a round.
func throughputScenarios(kairoctl string) []throughputScenario {
	kafkaRecords := envInt("KAIRO_BENCH_KAFKA_RECORDS", 1_000_000)
	var out []throughputScenario
	for _, compression := range []string{"snappy", "none"} {
		for _, acks := range []string{"all", "1"} {
			opts := []kgo.Opt{kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.AllISRAcks())}
			if acks == "1" {
				opts[1] = kgo.RequiredAcks(kgo.LeaderAck())
			}
			if compression == "none" {
				opts = append(opts, kgo.ProducerBatchCompression(kgo.NoCompression()))
			}
			out = append(out, throughputScenario{
				name: fmt.Sprintf("kafka-batched-%s/acks=%s", compression, acks),
				run: func(bc *benchCluster, topic string) (loadResult, error) {
					cpu0, start := ownCPU(), time.Now()
					err := brokertest.ProduceKafka(bc.KafkaAddresses(), topic, kafkaRecords, throughputRecordSize, opts...)
					return loadResult{records: kafkaRecords, rate: float64(kafkaRecords) / time.Since(start).Seconds(),
						clientCPU: ownCPU() - cpu0}, err
				},
			})
		}
	}
	httpLoads := []struct {
		name                        string
		records, batch, concurrency int
	}{
		{"http-batched", envInt("KAIRO_BENCH_HTTP_RECORDS", 2_000_000), 1000, 8},
		{"http-per-record", envInt("KAIRO_BENCH_SINGLE_RECORDS", 40_000), 1, 32},
	}
	for _, l := range httpLoads {
		for _, acks := range []string{"all", "1"} {
			out = append(out, throughputScenario{
				name: fmt.Sprintf("%s/acks=%s", l.name, acks),
				run: func(bc *benchCluster, topic string) (loadResult, error) {
					return kairoctlBench(kairoctl, bc.Endpoint(0), topic, acks, l.records, l.batch, l.concurrency)
				},
			})
		}
	}
	return out
}

// BenchmarkThroughput: replicated produce throughput of three brokers, a
// topic of 8 partitions at RF 3 with min.insync.replicas=2 per scenario,
// through the Kafka listener and through HTTP, acks=all beside acks=1
// (throughputScenarios). Each round starts one cluster per binary, the
// binary that goes first turning each round (KAIRO_BENCH_BROKERS,
// KAIRO_BENCH_ROUNDS, default 3), and the end gives every scenario's median and range in records/s
// per binary, with the load average, and the CPU time per record of the
// three brokers together (from /proc) and of the load generator (kgo in
// this process, or the kairoctl process). With KAIRO_BENCH_PROFILE set, each
// scenario is run again after its measurement, under a CPU profile of
// every broker (KAIRO_BENCH_PROFILE_WINDOW, default 10s), written as
// throughput-<binary>-<scenario>-broker-i.pprof. Run it with -benchtime 1x.
func BenchmarkThroughput(b *testing.B) {
	kairoctl := buildKairoctl(b)
	scenarios := throughputScenarios(kairoctl)
	if only := os.Getenv("KAIRO_BENCH_SCENARIOS"); only != "" {
		scenarios = slices.DeleteFunc(scenarios, func(s throughputScenario) bool {
			return !slices.ContainsFunc(strings.Split(only, ","), func(part string) bool {
				return part != "" && strings.Contains(s.name, part)
			})
		})
	}
	bins := binaries(b)
	// binary + "\t" + scenario → each round's records/s, and the CPU
	// time per record of the three brokers and of the load generator
	figures, brokerCost, clientCost := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	var loads []string
	for round := range envInt("KAIRO_BENCH_ROUNDS", 3) {
		for _, bin := range inRoundOrder(bins, round) {
			b.Run(fmt.Sprintf("broker=%s/round=%d", bin.name, round+1), func(b *testing.B) {
				bc := startCluster(b, bin, nil, false)
				loads = append(loads, loadAverage())
				for i, s := range scenarios {
					topic := fmt.Sprintf("tp-%d", i)
					createThroughputTopic(b, bc, topic)
					cpu0 := bc.cpu()
					res, err := s.run(bc, topic)
					if err != nil {
						b.Fatalf("%s: %v", s.name, err)
					}
					var brokers time.Duration
					for i, d := range bc.cpu() {
						brokers += d - cpu0[i]
					}
					key := bin.name + "\t" + s.name
					perRecord := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(max(res.records, 1)) }
					figures[key] = append(figures[key], res.rate)
					brokerCost[key] = append(brokerCost[key], perRecord(brokers))
					clientCost[key] = append(clientCost[key], perRecord(res.clientCPU))
					b.Logf("%s %s: %.0f records/s; CPU per record: brokers %.2f µs, load generator %.2f µs (load average %s)",
						bin.name, s.name, res.rate, perRecord(brokers), perRecord(res.clientCPU), loadAverage())
					profileScenario(b, bc, fmt.Sprintf("throughput-%s-%s", bin.name, strings.NewReplacer("/", "-", "=", "").Replace(s.name)),
						func() error { _, err := s.run(bc, fmt.Sprintf("%s-profiled", topic)); return err },
						func() { createThroughputTopic(b, bc, fmt.Sprintf("%s-profiled", topic)) })
				}
			})
		}
	}
	b.Logf("load average at the start of each cluster: %s", strings.Join(loads, ", "))
	for _, s := range scenarios {
		line := []string{s.name}
		for _, bin := range bins {
			key := bin.name + "\t" + s.name
			line = append(line, fmt.Sprintf("%s %s records/s, CPU µs/record: brokers %s, load generator %s", bin.name,
				medianRange(figures[key], 0), medianRange(brokerCost[key], 2), medianRange(clientCost[key], 2)))
		}
		b.Log(strings.Join(line, " | "))
	}
	logPairedRatios(b, bins, scenarios, figures)
}

// logPairedRatios logs, as median and range over the rounds, two ratios
// taken within each round, where the machine's speed is the same for
// both figures (on a shared machine it moves by 2× between rounds): how
// much faster acks=1 ran than acks=all, for each load and binary, and how
// much faster each binary ran than the first, for each scenario (the
// binaries of one round run one after the other).
func logPairedRatios(b *testing.B, bins []binary, scenarios []throughputScenario, figures map[string][]float64) {
	ratios := func(num, den []float64) []float64 {
		var out []float64
		for i := range min(len(num), len(den)) {
			if den[i] > 0 {
				out = append(out, num[i]/den[i])
			}
		}
		return out
	}
	for _, s := range scenarios {
		load, ok := strings.CutSuffix(s.name, "/acks=all")
		if !ok {
			continue
		}
		for _, bin := range bins {
			all, one := figures[bin.name+"\t"+s.name], figures[bin.name+"\t"+load+"/acks=1"]
			b.Logf("%s %s: acks=1 / acks=all within each round %s", bin.name, load, medianRange(ratios(one, all), 2))
		}
	}
	for _, bin := range bins[1:] {
		for _, s := range scenarios {
			b.Logf("%s: %s / %s within each round %s", s.name, bin.name, bins[0].name,
				medianRange(ratios(figures[bin.name+"\t"+s.name], figures[bins[0].name+"\t"+s.name]), 2))
		}
	}
}

// createThroughputTopic creates topic, 8 partitions at RF 3 with
// min.insync.replicas=2, and waits until every replica is in its ISR.
func createThroughputTopic(t testing.TB, bc *benchCluster, topic string) {
	t.Helper()
	c := bc.Client(0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.CreateTopic(ctx, api.CreateTopicRequest{Name: topic, Partitions: 8, ReplicationFactor: 3,
		Config: map[string]string{"min.insync.replicas": "2"}}); err != nil {
		t.Fatal(err)
	}
	waitInSync(t, c, topic, 8, 2*time.Minute)
}

// profileScenario, with KAIRO_BENCH_PROFILE set, profiles every broker
// while run repeats on fresh topics (create makes the next one) until the
// profile window ends.
func profileScenario(t testing.TB, bc *benchCluster, name string, run func() error, create func()) {
	if os.Getenv("KAIRO_BENCH_PROFILE") == "" {
		return
	}
	create()
	window := envDuration("KAIRO_BENCH_PROFILE_WINDOW", 10*time.Second)
	var done sync.WaitGroup
	done.Add(1)
	finished := make(chan struct{})
	go func() {
		defer done.Done()
		bc.profile(t, name, window)()
		close(finished)
	}()
	for {
		if err := run(); err != nil {
			t.Errorf("%s under the profiler: %v", name, err)
		}
		select {
		case <-finished:
			done.Wait()
			return
		default:
		}
	}
}

// medianRange is "median (min – max)" of figures, with decimals.
func medianRange(v []float64, decimals int) string {
	if len(v) == 0 {
		return "-"
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return fmt.Sprintf("%.*f (%.*f – %.*f)", decimals, s[len(s)/2], decimals, s[0], decimals, s[len(s)-1])
}

// loadResult is what one run of a load did: the records acknowledged,
// their rate, and the CPU time the load generator spent.
type loadResult struct {
	records   int
	rate      float64
	clientCPU time.Duration
}

// ownCPU is the user and system CPU time this process has used: kgo
// produces from it.
func ownCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// buildKairoctl compiles cmd/kairoctl once into the benchmark's temporary
// directory: its bench command is the HTTP load.
func buildKairoctl(t testing.TB) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "kairoctl")
	if b, err := exec.Command("go", "build", "-o", out, "github.com/kairolog/kairolog/cmd/kairoctl").CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/kairoctl: %v\n%s", err, b)
	}
	return out
}

// kairoctlBench runs kairoctl bench's produce mode against endpoint and
// returns the records and the rate it reports, and its CPU time.
func kairoctlBench(kairoctl, endpoint, topic, acks string, records, batch, concurrency int) (loadResult, error) {
	cmd := exec.Command(kairoctl, "--broker", endpoint, "--output", "json", "bench", "--topic", topic,
		"--mode", "produce", "--idempotent=false", "--acks", acks, "--records", strconv.Itoa(records),
		"--record-size", strconv.Itoa(throughputRecordSize), "--batch", strconv.Itoa(batch),
		"--concurrency", strconv.Itoa(concurrency))
	out, err := cmd.Output()
	if err != nil {
		return loadResult{}, fmt.Errorf("kairoctl bench: %w: %s", err, out)
	}
	var results []struct {
		Records       int     `json:"records"`
		RecordsPerSec float64 `json:"records_per_sec"`
	}
	if err := json.Unmarshal(out, &results); err != nil || len(results) != 1 {
		return loadResult{}, fmt.Errorf("kairoctl bench output %q: %v", out, err)
	}
	return loadResult{records: results[0].Records, rate: results[0].RecordsPerSec,
		clientCPU: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, nil
}
