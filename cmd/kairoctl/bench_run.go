package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairolog/kairolog/broker/client"
)

// benchResult is one row of the summary.
type benchResult struct {
	Name       string  `json:"scenario"`
	Records    int64   `json:"records"`
	Requests   int64   `json:"requests"`
	Seconds    float64 `json:"seconds"`
	RecordsPS  float64 `json:"records_per_sec"`
	MBPS       float64 `json:"mb_per_sec"`
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	MaxMs      float64 `json:"max_ms"`
	RecordSize int     `json:"record_size"`
}

func newResult(name string, records, requests int64, bytes int64, elapsed time.Duration, lat []time.Duration) benchResult {
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	s := elapsed.Seconds()
	return benchResult{Name: name, Records: records, Requests: requests, Seconds: s,
		RecordsPS: float64(records) / s, MBPS: float64(bytes) / s / 1e6,
		P50Ms: pct(0.50), P99Ms: pct(0.99), MaxMs: pct(1)}
}

// progressLine prints a rate line every second until stop is closed.
func progressLine(w io.Writer, name string, done *atomic.Int64, total int64, stop <-chan struct{}) {
	start := time.Now()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			fmt.Fprintf(w, "\r%-60s\r", "")
			return
		case <-t.C:
			n := done.Load()
			fmt.Fprintf(w, "\r%s: %d/%d records, %.0f records/s   ", name, n, total, float64(n)/time.Since(start).Seconds())
		}
	}
}

func scenarioName(o benchOptions) string {
	kind := "single"
	if o.batch > 1 {
		kind = "batch=" + strconv.Itoa(o.batch)
	}
	key := "keyless"
	if o.keyed {
		key = "keyed"
	}
	return fmt.Sprintf("produce %s %s acks=%s", kind, key, o.acks)
}

// benchProduce sends o.records records in requests of o.batch from
// o.concurrency workers.
func benchProduce(ctx context.Context, c *client.Client, o benchOptions, progress io.Writer) (benchResult, error) {
	name := scenarioName(o)
	plain := func(ctx context.Context, req client.ProduceRequest) error {
		_, err := c.Produce(ctx, req)
		return err
	}
	senders := make([]func(context.Context, client.ProduceRequest) error, o.concurrency)
	for w := range senders {
		senders[w] = plain
	}
	switch {
	case o.direct:
		r, err := newLeaderRouter(ctx, c, o.topic, o.concurrency)
		if err != nil {
			return benchResult{}, err
		}
		for w := range senders {
			senders[w] = r.produce
		}
		name += " direct"
	case o.idempotent:
		for w := range senders {
			p, err := c.NewIdempotentProducer(ctx, o.topic, client.ProducerOptions{Acks: o.acks})
			if err != nil {
				return benchResult{}, err
			}
			senders[w] = func(ctx context.Context, req client.ProduceRequest) error {
				_, err := p.Send(ctx, recordsOf(req))
				return err
			}
		}
		name += " idempotent"
	}
	value := strings.Repeat("x", o.recordSize)
	requests := (o.records + o.batch - 1) / o.batch
	var next, done atomic.Int64
	var firstErr error
	var errOnce sync.Once
	lats := make([][]time.Duration, o.concurrency)
	stop := make(chan struct{})
	go progressLine(progress, name, &done, int64(o.records), stop)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < o.concurrency; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= requests || ctx.Err() != nil {
					return
				}
				req := produceRequest(o, i, value)
				t0 := time.Now()
				err := senders[w](ctx, req)
				lats[w] = append(lats[w], time.Since(t0))
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				done.Add(int64(recordsIn(req)))
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stop)
	if firstErr != nil {
		return benchResult{}, fmt.Errorf("%s: %w", name, firstErr)
	}
	all := slices.Concat(lats...)
	n := done.Load()
	r := newResult(name, n, int64(len(all)), n*int64(o.recordSize), elapsed, all)
	r.RecordSize = o.recordSize
	return r, nil
}

// recordsOf is the records of a produce request, a single record as one.
func recordsOf(r client.ProduceRequest) []client.ProduceRecord {
	if len(r.Records) > 0 {
		return r.Records
	}
	return []client.ProduceRecord{{Key: r.Key, Value: r.Message}}
}

func recordsIn(r client.ProduceRequest) int {
	if len(r.Records) > 0 {
		return len(r.Records)
	}
	return 1
}

func produceRequest(o benchOptions, i int, value string) client.ProduceRequest {
	req := client.ProduceRequest{Topic: o.topic, Acks: o.acks}
	first := i * o.batch
	n := min(o.batch, o.records-first)
	if n == 1 {
		req.Message = value
		if o.keyed {
			k := "key-" + strconv.Itoa(first)
			req.Key = &k
		}
		return req
	}
	req.Records = make([]client.ProduceRecord, n)
	for j := range req.Records {
		req.Records[j].Value = value
		if o.keyed {
			k := "key-" + strconv.Itoa(first+j)
			req.Records[j].Key = &k
		}
	}
	return req
}

// benchConsume reads every partition of the topic from its log start to its
// high watermark, one fetcher per partition.
func benchConsume(ctx context.Context, c *client.Client, o benchOptions, progress io.Writer) (benchResult, error) {
	d, err := c.DescribeTopic(ctx, o.topic)
	if err != nil {
		return benchResult{}, err
	}
	var total int64
	for _, p := range d.Partitions {
		total += p.HighWatermark - p.LogStartOffset
	}
	name := fmt.Sprintf("consume max_records=%d", o.fetchRecords)
	var done, bytes atomic.Int64
	var firstErr error
	var errOnce sync.Once
	lats := make([][]time.Duration, len(d.Partitions))
	stop := make(chan struct{})
	go progressLine(progress, name, &done, total, stop)
	start := time.Now()
	var wg sync.WaitGroup
	for i, p := range d.Partitions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			off := p.LogStartOffset
			for off < p.HighWatermark && ctx.Err() == nil {
				t0 := time.Now()
				resp, err := c.Fetch(ctx, client.FetchRequest{Topic: o.topic, Partition: p.Partition, Offset: off,
					MaxRecords: o.fetchRecords, MaxBytes: 64 << 20})
				lats[i] = append(lats[i], time.Since(t0))
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				var b int64
				for _, r := range resp.Records {
					b += int64(len(r.Message))
				}
				done.Add(int64(len(resp.Records)))
				bytes.Add(b)
				if resp.NextOffset <= off {
					return
				}
				off = resp.NextOffset
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stop)
	if firstErr != nil {
		return benchResult{}, fmt.Errorf("%s: %w", name, firstErr)
	}
	all := slices.Concat(lats...)
	r := newResult(name, done.Load(), int64(len(all)), bytes.Load(), elapsed, all)
	r.RecordSize = o.recordSize
	return r, nil
}

func printBenchResults(w io.Writer, rs []benchResult, asJSON bool) error {
	if asJSON {
		return printJSON(w, rs)
	}
	rows := make([][]string, 0, len(rs))
	for _, r := range rs {
		rows = append(rows, []string{r.Name, itoa(r.Records), itoa(r.Requests), fmt.Sprintf("%.2f", r.Seconds),
			fmt.Sprintf("%.0f", r.RecordsPS), fmt.Sprintf("%.1f", r.MBPS), fmt.Sprintf("%.2f", r.P50Ms), fmt.Sprintf("%.2f", r.P99Ms)})
	}
	return printTable(w, []string{"SCENARIO", "RECORDS", "REQUESTS", "SECONDS", "RECORDS/S", "MB/S", "P50-MS", "P99-MS"}, rows)
}
