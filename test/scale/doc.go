// Package scale measures replication at scale on real broker processes:
// what an idle three-broker cluster at replication factor 3 costs as its
// partition count grows, in CPU and in peer requests per broker
// (BenchmarkIdleCost), and how long a broker restarted after the others
// took 1 GiB over 1000 partitions takes to rejoin every ISR
// (BenchmarkCatchUp, KAIRO_BENCH_CATCHUP_MB sets the size), and the
// replicated produce throughput of three brokers at RF 3 with
// min.insync.replicas=2, acks=all beside acks=1, through the Kafka
// listener (kgo) and over HTTP (kairoctl bench), batched and per record
// (BenchmarkThroughput). The figures go to docs/benchmarks.md
// ("Replication at scale"); nothing here asserts a speed.
//
// The measurements are benchmarks that take minutes each and run one
// cluster per case, so run them once:
//
//	go test ./test/scale -run '^$' -bench IdleCost -benchtime 1x -timeout 3h -v
//	go test ./test/scale -run '^$' -bench CatchUp -benchtime 1x -timeout 1h -v
//	go test ./test/scale -run '^$' -bench Throughput -benchtime 1x -timeout 1h -v
//
// KAIRO_BENCH_BROKERS measures broker binaries side by side in one run,
// alternating: "name=path,name=path" (default: this tree's cmd/broker,
// built once). KAIRO_BENCH_ROUNDS (default 1, 3 for BenchmarkThroughput)
// repeats each comparison; KAIRO_BENCH_SCENARIOS keeps the throughput
// scenarios whose names contain one of its comma-separated parts (e.g.
// "http-batched,kafka-batched-snappy/acks=all"); KAIRO_BENCH_HTTP_RECORDS
// (default 2 000 000), KAIRO_BENCH_SINGLE_RECORDS (40 000) and
// KAIRO_BENCH_KAFKA_RECORDS (1 000 000) size its loads;
// KAIRO_BENCH_PARTITIONS (default "300,3000"; multiples of 3) sets the partition counts,
// KAIRO_BENCH_IDLE (default 30s) the measuring window. With
// KAIRO_BENCH_PROFILE set to a directory, every broker's CPU profile over
// the window is written there (go tool pprof reads it); the profiler's
// own cost is then in the CPU figure too. BenchmarkThroughput profiles
// each scenario run again after its measurement, over
// KAIRO_BENCH_PROFILE_WINDOW (default 10s).
//
// For the idle cost and catch-up, every broker's peer listener is
// advertised behind a counting proxy, so every binary's peer requests are
// counted the same way, whatever metrics it has; the throughput clusters
// talk to each other directly.
package scale
