package kafka

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kairolog/kairolog/broker/api"
)

// TestIdempotentProduceAcrossLeaderKill: kgo's idempotent producer
// (acks=all) keeps producing while the partition's leader is killed with
// SIGKILL; it retries whatever was in flight against the new leader, and
// the log then holds every record exactly once, in order: the retried
// batches the old leader had replicated are recognised as duplicates.
func TestIdempotentProduceAcrossLeaderKill(t *testing.T) {
	c := startCluster(t, 3, nil)
	ctx := testContext(t, 120*time.Second)
	const topic, n = "exactly-once", 3000
	if _, err := c.Client(0).CreateTopic(ctx, api.CreateTopicRequest{Name: topic, Partitions: 1, ReplicationFactor: 3,
		Config: map[string]string{"min.insync.replicas": "2"}}); err != nil {
		t.Fatal(err)
	}
	desc, err := c.Client(0).DescribeTopic(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	leader := int(desc.Partitions[0].Leader)
	var seeds []string
	for i := 0; i < 3; i++ {
		if i != leader {
			seeds = append(seeds, c.KafkaAddress(i))
		}
	}
	prod := newClient(t, seeds, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(2*time.Millisecond), kgo.MaxBufferedRecords(200))

	var acked atomic.Int64
	var mu sync.Mutex
	var failures []error
	killed := false
	for i := 0; i < n; i++ {
		if !killed && acked.Load() >= n/3 {
			if err := c.Kill(leader); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
		prod.Produce(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				failures = append(failures, err)
				mu.Unlock()
				return
			}
			acked.Add(1)
		})
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if !killed {
		t.Fatal("every record was acknowledged before the leader could be killed")
	}
	if len(failures) > 0 {
		t.Fatalf("%d records failed, the first: %v", len(failures), failures[0])
	}
	survivor := (leader + 1) % 3
	if d, err := c.Client(survivor).DescribeTopic(ctx, topic); err != nil || d.Partitions[0].Leader == int32(leader) {
		t.Fatalf("after the kill, broker %d describes %+v (%v): the leadership did not move", survivor, d, err)
	}

	cons := newClient(t, seeds, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < n {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records", len(got), n)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Logf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if len(got) != n {
		t.Fatalf("the log holds %d records for %d produced", len(got), n)
	}
	for i, v := range got {
		if v != strconv.Itoa(i) {
			t.Fatalf("offset %d holds %s, want %d: a record was duplicated, lost or reordered", i, v, i)
		}
	}
	// Nothing more arrives: a duplicate past the count would show here.
	if fs := cons.PollRecords(testContext(t, 2*time.Second), 1); fs.NumRecords() > 0 {
		t.Fatalf("the log holds more than %d records", n)
	}
}
