package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
)

// benchOptions are the knobs of one benchmark run.
type benchOptions struct {
	topic        string
	partitions   int32
	rf           int16
	records      int
	recordSize   int
	batch        int
	concurrency  int
	keyed        bool
	acks         string
	fetchRecords int
	mode         string
	matrix       bool
	baseline     bool
	direct       bool
	config       []string
	// idempotent produces through one idempotent producer per connection
	// (client.Producer), not with --direct.
	idempotent bool
}

func benchCmd(g *globals) *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure produce and consume throughput and latency",
		Long: `Measure produce and consume throughput and latency against a broker.

One run produces --records records of --record-size bytes, --batch records per
request, from --concurrency connections (keep-alive), then consumes them back
with one fetcher per partition. --matrix runs every combination of single and
batched, keyed and keyless, acks 1 and all. --baseline also measures an
in-process Go HTTP handler that does nothing with the same requests, as the
ceiling of what HTTP on this machine allows.

Each connection produces as an idempotent producer (as kairoctl produce
does: a producer id, a sequence per partition, retries with the same
sequence); --idempotent=false sends plain produces, each once. --direct
always sends plain produces.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			collectLessOften()
			c, err := client.New(g.broker, client.WithTimeout(g.timeout), client.WithUserAgent("kairoctl-bench"),
				client.WithHTTPClient(&http.Client{Transport: benchTransport(o.concurrency)}))
			if err != nil {
				return err
			}
			return runBench(cmd.Context(), c, o, cmd.OutOrStdout(), cmd.ErrOrStderr(), g.json())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.topic, "topic", "kairo-bench", "topic to use (created if missing)")
	f.Int32Var(&o.partitions, "partitions", 8, "partitions of a created topic")
	f.Int16Var(&o.rf, "replication-factor", 1, "replication factor of a created topic")
	f.IntVar(&o.records, "records", 100_000, "records to produce per scenario")
	f.IntVar(&o.recordSize, "record-size", 100, "bytes per record value")
	f.IntVar(&o.batch, "batch", 1, "records per produce request")
	f.IntVar(&o.concurrency, "concurrency", 32, "concurrent connections")
	f.BoolVar(&o.keyed, "keyed", false, "give every record a key (partitioned by murmur2)")
	f.StringVar(&o.acks, "acks", "1", "1 or all")
	f.IntVar(&o.fetchRecords, "fetch-records", 10_000, "max_records per fetch request")
	f.StringVar(&o.mode, "mode", "both", "produce, consume or both")
	f.BoolVar(&o.matrix, "matrix", false, "run single/batched × keyed/keyless × acks 1/all")
	f.BoolVar(&o.baseline, "baseline", false, "also measure a do-nothing Go HTTP handler with the same requests")
	f.BoolVar(&o.direct, "direct", false, "send each record to its partition's leader (as Kafka clients do) instead of letting --broker proxy it")
	f.BoolVar(&o.idempotent, "idempotent", true, "produce as one idempotent producer per connection (not with --direct)")
	f.StringArrayVar(&o.config, "config", nil, "topic config of a created topic, key=value (repeatable), e.g. min.insync.replicas=2")
	cmd.AddCommand(serveNoopCmd())
	return cmd
}

// serveNoopCmd serves the baseline handler on its own, for load generators
// such as wrk to compare with a broker.
func serveNoopCmd() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "serve-noop",
		Short: "Serve a do-nothing HTTP handler (the --baseline one) until Ctrl-C",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			srv := &http.Server{Handler: noopHandler()}
			go func() { <-cmd.Context().Done(); srv.Close() }()
			fmt.Fprintf(cmd.ErrOrStderr(), "serving a do-nothing handler on %s\n", ln.Addr())
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8081", "listen address")
	return cmd
}

// noopHandler reads the body and answers a fixed produce reply: the floor
// of what one HTTP request costs on this machine.
func noopHandler() http.Handler {
	reply := []byte(`{"status":"stored","topic":"kairo-bench","partition":0,"offset":0}` + "\n")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	})
}

// collectLessOften lets the load generator's heap grow to five times what is
// live before collecting, unless GOGC says otherwise: its live heap is a few
// requests, so Go's default collects every few requests, and the cores it
// spends doing so are taken from the brokers it measures on the same machine.
func collectLessOften() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

func benchTransport(conns int) *http.Transport {
	t := client.NewTransport()
	t.MaxIdleConnsPerHost = max(conns, 2)
	t.MaxConnsPerHost = max(conns, 2)
	return t
}

func runBench(ctx context.Context, c *client.Client, o benchOptions, out, progress io.Writer, asJSON bool) error {
	if o.records < 1 || o.recordSize < 0 || o.batch < 1 || o.concurrency < 1 {
		return errors.New("--records, --batch and --concurrency must be positive")
	}
	if o.mode != "produce" && o.mode != "consume" && o.mode != "both" {
		return fmt.Errorf("--mode must be produce, consume or both, got %q", o.mode)
	}
	if err := ensureBenchTopic(ctx, c, o); err != nil {
		return err
	}
	var results []benchResult
	scenarios := []benchOptions{o}
	if o.matrix {
		scenarios = scenarios[:0]
		for _, batch := range []int{1, max(o.batch, 1000)} {
			for _, keyed := range []bool{false, true} {
				for _, acks := range []string{"1", "all"} {
					s := o
					s.batch, s.keyed, s.acks = batch, keyed, acks
					scenarios = append(scenarios, s)
				}
			}
		}
	}
	if o.baseline {
		r, err := benchBaseline(ctx, o, progress)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	if o.mode != "consume" {
		for _, s := range scenarios {
			r, err := benchProduce(ctx, c, s, progress)
			if err != nil {
				return err
			}
			results = append(results, r)
		}
	}
	if o.mode != "produce" {
		r, err := benchConsume(ctx, c, o, progress)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	return printBenchResults(out, results, asJSON)
}

func ensureBenchTopic(ctx context.Context, c *client.Client, o benchOptions) error {
	_, err := c.DescribeTopic(ctx, o.topic)
	if api.IsCode(err, api.CodeUnknownTopic) {
		cfg := map[string]string{}
		for _, kv := range o.config {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return fmt.Errorf("--config %q: want key=value", kv)
			}
			cfg[k] = v
		}
		_, err = c.CreateTopic(ctx, api.CreateTopicRequest{Name: o.topic, Partitions: o.partitions, ReplicationFactor: o.rf, Config: cfg})
		if api.IsCode(err, api.CodeTopicAlreadyExists) {
			err = nil
		}
	}
	return err
}

// benchBaseline serves a handler that reads the body and answers a fixed
// reply, on a loopback port of this process, and produces to it exactly as
// to the broker.
func benchBaseline(ctx context.Context, o benchOptions, progress io.Writer) (benchResult, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return benchResult{}, err
	}
	srv := &http.Server{Handler: noopHandler()}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	c, err := client.New(ln.Addr().String(), client.WithHTTPClient(&http.Client{Transport: benchTransport(o.concurrency)}))
	if err != nil {
		return benchResult{}, err
	}
	o.acks = "1"
	o.idempotent = false // the do-nothing handler hands out no producer ids
	r, err := benchProduce(ctx, c, o, progress)
	r.Name = "noop-http-handler " + strings.TrimPrefix(r.Name, "produce ")
	return r, err
}
