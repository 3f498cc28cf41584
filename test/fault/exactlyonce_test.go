package fault

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/storage"
)

const exactlyTopic = "exactly"

// TestExactlyOnceThroughKills: idempotent producers (client.Producer,
// acks=all) write to a topic of two partitions with three replicas while
// the leader of partition 0 and then the controller are killed with
// SIGKILL round after round. The producers reach the cluster through a
// front that sends each request to a running broker in turn (as a
// Kubernetes Service would), and resend every request that timed out, lost
// its connection or got a retriable 503 with its sequence. At the end every
// replica's log, read from disk, holds each record the producers sent at
// most once, and each acknowledged record at its acknowledged offset: 0
// duplicates, 0 lost. The counts and the number of resends the brokers
// answered as duplicates (each one a duplicate record without the producer
// fields) are logged.
func TestExactlyOnceThroughKills(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the broker and runs three processes for about a minute and a half")
	}
	rounds, controllerRounds := envInt(t, "FAULT_ROUNDS", 6), envInt(t, "FAULT_CONTROLLER_ROUNDS", 2)
	procs := newCluster(t, 3, "offsets.topic.num.partitions=1\n")
	startAll(t, procs)
	ctx := context.Background()
	createReplicatedTopic(t, procs, exactlyTopic, 2)
	waitAllInSync(t, procs, exactlyTopic, time.Minute)
	// The producers ask any broker about the topic.
	eventually(t, 10*time.Second, "every broker to know the topic", func() bool {
		for _, p := range procs {
			if _, err := p.client.DescribeTopic(ctx, exactlyTopic); err != nil {
				return false
			}
		}
		return true
	})

	w := &exactlyWorkload{procs: procs, acked: map[string]api.RecordPosition{}}
	w.start(t, 4)
	stopped := false
	defer func() {
		if !stopped {
			w.stop()
		}
	}()
	time.Sleep(2 * time.Second)

	kill := func(r int, controllerRound bool) {
		waitAllInSync(t, procs, exactlyTopic, time.Minute)
		leader, controller := partitionLeadership(t, procs, exactlyTopic)
		victim, what := leader, "leader of partition 0"
		if controllerRound {
			victim, what = controller, "controller"
		}
		before := w.ackedCount()
		procs[victim].kill()
		// Let the producers run into the failover and through it.
		eventually(t, time.Minute, "acknowledged records after the kill", func() bool { return w.ackedCount() >= before+50 })
		t.Logf("round %d: SIGKILL of broker %d (%s); %d records acknowledged before it", r, victim, what, before)
		procs[victim].start(t)
		procs[victim].waitReady(t, time.Minute)
	}
	for r := range rounds {
		kill(r+1, false)
	}
	for r := range controllerRounds {
		kill(rounds+r+1, true)
	}
	time.Sleep(time.Second)
	w.stop()
	stopped = true

	waitAllInSync(t, procs, exactlyTopic, time.Minute)
	hws := make([]int64, 2)
	eventually(t, 30*time.Second, "the high watermarks to reach the log ends", func() bool {
		d, err := anyClient(procs).DescribeTopic(ctx, exactlyTopic)
		if err != nil {
			return false
		}
		for i, p := range d.Partitions {
			if p.HighWatermark != p.LogEndOffset {
				return false
			}
			hws[i] = p.HighWatermark
		}
		return true
	})
	for _, p := range procs {
		p.stop(t)
	}

	// Every replica of each partition, read from its files.
	count := map[string]int{}
	at := map[api.RecordPosition]string{}
	for part := range int32(2) {
		var first []byte
		for _, p := range procs {
			l, err := storage.Open(filepath.Join(p.dataDir, fmt.Sprintf("%s-%d", exactlyTopic, part)), storage.DefaultConfig())
			if err != nil {
				t.Fatalf("broker %d: open partition %d: %v", p.id, part, err)
			}
			raw := readRaw(t, l, hws[part])
			if first == nil {
				first = raw
				for _, r := range readRecords(t, l, hws[part]) {
					count[string(r.Value)]++
					at[api.RecordPosition{Partition: part, Offset: r.Offset}] = string(r.Value)
				}
			} else if string(raw) != string(first) {
				t.Errorf("partition %d: broker %d's log below the high watermark %d differs from broker %d's", part, p.id, hws[part], procs[0].id)
			}
			l.Close()
		}
	}
	duplicated, lost := 0, 0
	for v, n := range count {
		if n > 1 {
			duplicated++
			if duplicated <= 10 {
				t.Errorf("%s is stored %d times", v, n)
			}
		}
	}
	for v, pos := range w.acked {
		if at[api.RecordPosition{Partition: pos.Partition, Offset: pos.Offset}] != v {
			lost++
			if lost <= 10 {
				t.Errorf("%s was acknowledged at partition %d offset %d; it is not there", v, pos.Partition, pos.Offset)
			}
		}
	}
	t.Logf("records sent %d, acknowledged %d, stored %d (below the high watermarks %v); lost %d, duplicated %d",
		w.sent.Load(), len(w.acked), len(count), hws, lost, duplicated)
	t.Logf("produce requests %d, resends %d, resends answered as duplicates %d, epoch bumps %d, sends given up %d (records of them stored: %d)",
		w.requests.Load(), w.retries.Load(), w.duplicates.Load(), w.epochBumps.Load(), len(w.failed), w.storedOf(count))
	if w.duplicates.Load() == 0 {
		t.Errorf("no resend was answered as a duplicate: the kills did not exercise deduplication")
	}
	if len(w.failed) > 0 {
		t.Errorf("%d sends failed for good; the first: %v", len(w.failed), w.firstErr)
	}
}

// exactlyWorkload runs idempotent producers, each sending batches of one
// to three records with values no other record has.
type exactlyWorkload struct {
	procs  []*brokerProc
	cancel context.CancelFunc
	wg     sync.WaitGroup

	sent, requests, retries, duplicates, epochBumps atomic.Int64

	mu sync.Mutex
	// acked maps each acknowledged value to where it was stored.
	acked map[string]api.RecordPosition
	// failed are the values of sends that failed for good.
	failed   []string
	firstErr error
}

func (w *exactlyWorkload) start(t *testing.T, producers int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	front := &http.Client{Transport: &runningBrokers{procs: w.procs, base: client.NewTransport()}}
	for i := range producers {
		c, err := client.New(w.procs[0].http, client.WithHTTPClient(front), client.WithTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.NewIdempotentProducer(ctx, exactlyTopic, client.ProducerOptions{Acks: client.AcksAll, TimeoutMs: 5000,
			RetryFor: 2 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		w.wg.Go(func() { w.produce(ctx, i, p) })
	}
}

func (w *exactlyWorkload) stop() {
	w.cancel()
	w.wg.Wait()
}

func (w *exactlyWorkload) produce(ctx context.Context, id int, p *client.Producer) {
	defer func() {
		st := p.Stats()
		w.requests.Add(st.Requests.Load())
		w.retries.Add(st.Retries.Load())
		w.duplicates.Add(st.Duplicates.Load())
		w.epochBumps.Add(st.EpochBumps.Load())
	}()
	for n := 0; ctx.Err() == nil; n++ {
		part := int32(n % 2)
		recs := make([]client.ProduceRecord, 1+n%3)
		for j := range recs {
			recs[j] = client.ProduceRecord{Partition: &part, Value: fmt.Sprintf("producer-%d-send-%d-record-%d", id, n, j)}
		}
		w.sent.Add(int64(len(recs)))
		pos, err := p.Send(ctx, recs)
		if ctx.Err() != nil {
			return // stopped in flight: unknown, as any unanswered send
		}
		w.mu.Lock()
		for j, r := range recs {
			if err == nil && pos[j].Stored() {
				w.acked[r.Value] = pos[j]
			} else {
				w.failed = append(w.failed, r.Value)
				if w.firstErr == nil {
					w.firstErr = err
				}
			}
		}
		w.mu.Unlock()
	}
}

func (w *exactlyWorkload) ackedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// storedOf counts the records of failed sends that are stored.
func (w *exactlyWorkload) storedOf(count map[string]int) int {
	n := 0
	for _, v := range w.failed {
		if count[v] > 0 {
			n++
		}
	}
	return n
}

// runningBrokers sends each request to the next running broker, as a
// Service in front of the brokers would.
type runningBrokers struct {
	procs []*brokerProc
	rr    atomic.Uint64
	base  http.RoundTripper
}

func (f *runningBrokers) RoundTrip(req *http.Request) (*http.Response, error) {
	var target *brokerProc
	for range len(f.procs) {
		if p := f.procs[int(f.rr.Add(1))%len(f.procs)]; p.running() {
			target = p
			break
		}
	}
	if target == nil {
		target = f.procs[0]
	}
	req = req.Clone(req.Context())
	req.URL.Host, req.Host = target.http, target.http
	return f.base.RoundTrip(req)
}
