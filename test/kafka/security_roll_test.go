package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kairolog/kairolog/internal/brokertest"
)

// ackedRecord is a record the brokers acknowledged, and where.
type ackedRecord struct {
	value     string
	partition int32
	offset    int64
}

// ackedProducer produces numbered records without pause and keeps which
// ones the brokers acknowledged and which failed.
type ackedProducer struct {
	cl   *kgo.Client
	mu   sync.Mutex
	acks []ackedRecord
	errs []error
	wg   sync.WaitGroup
}

// run produces until stop is done; each record may take until ctx is done.
func (p *ackedProducer) run(ctx, stop context.Context, topic string) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for i := 0; stop.Err() == nil; i++ {
			value := fmt.Sprintf("record-%d", i)
			p.cl.Produce(ctx, &kgo.Record{Topic: topic, Value: []byte(value)}, func(r *kgo.Record, err error) {
				p.mu.Lock()
				defer p.mu.Unlock()
				if err != nil {
					p.errs = append(p.errs, err)
					return
				}
				p.acks = append(p.acks, ackedRecord{value: value, partition: r.Partition, offset: r.Offset})
			})
			time.Sleep(2 * time.Millisecond)
		}
	}()
}

// acked is how many records the brokers acknowledged so far.
func (p *ackedProducer) acked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acks)
}

// waitAcked waits until n more records than before are acknowledged.
func (p *ackedProducer) waitAcked(t *testing.T, ctx context.Context, n int, step string) {
	t.Helper()
	want := p.acked() + n
	for p.acked() < want {
		if ctx.Err() != nil {
			t.Fatalf("%s: %d records acknowledged, want %d; failures: %v", step, p.acked(), want, p.failures())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// acknowledged are the values acknowledged so far.
func (p *ackedProducer) acknowledged() []ackedRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ackedRecord(nil), p.acks...)
}

func (p *ackedProducer) failures() []error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]error(nil), p.errs...)
}

// waitInSync waits until every partition of topic has all three replicas
// in its ISR, so that stopping one broker leaves two in sync.
func waitInSync(t *testing.T, ctx context.Context, adm *kadm.Client, topic string) {
	t.Helper()
	for {
		topics, err := adm.ListTopics(ctx, topic)
		inSync := err == nil && topics.Has(topic) && len(topics[topic].Partitions) > 0
		if inSync {
			for _, p := range topics[topic].Partitions {
				inSync = inSync && len(p.ISR) == 3
			}
		}
		if inSync {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s never had three replicas in sync: %v %v", topic, topics, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestKafkaAuthenticationRoll turns SCRAM on for the Kafka listeners of
// three running brokers, one broker at a time as the operator rolls a
// StatefulSet, and off again, while a kgo producer that was given its
// credentials before the roll produces with acks=all. Authorization is on
// throughout with the producer's user a superuser, so a broker that took
// the producer for anonymous would refuse it. Between the two rolls a
// client without a login is refused. The producer keeps getting
// acknowledgements after every restart, no record fails, and a consumer
// afterwards finds every acknowledged record exactly once.
func TestKafkaAuthenticationRoll(t *testing.T) {
	p := newSecurePKI(t)
	c, operator := startSecureCluster(t, p, 3, func(int) []string { return authorizationFlags })
	putUser(t, c, operator, "root", map[string]any{"password": "root-pw"})
	ctx := testContext(t, 5*time.Minute)

	login := kgo.SASL(scram.Auth{User: "root", Pass: "root-pw"}.AsSha512Mechanism())
	adm := kadm.NewClient(newClient(t, c.KafkaAddresses(), login))
	const topic = "rolled"
	if _, err := adm.CreateTopic(ctx, 3, 3, nil, topic); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	prod := &ackedProducer{cl: newClient(t, c.KafkaAddresses(), login, kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(5*time.Millisecond), kgo.RecordDeliveryTimeout(2*time.Minute))}
	produceCtx, stopProducing := context.WithCancel(ctx)
	defer stopProducing()
	prod.run(ctx, produceCtx, topic)
	prod.waitAcked(t, ctx, 100, "before the roll")

	roll := func(step string, extra []string) {
		for i := 0; i < c.Len(); i++ {
			waitInSync(t, ctx, adm, topic)
			if err := c.Stop(i); err != nil {
				t.Fatalf("%s: stop broker %d: %v", step, i, err)
			}
			if err := c.StartWithArgs(i, nil, extra); err != nil {
				t.Fatalf("%s: start broker %d: %v", step, i, err)
			}
			if err := c.WaitReady(ctx, i); err != nil {
				t.Fatalf("%s: broker %d: %v", step, i, err)
			}
			prod.waitAcked(t, ctx, 100, fmt.Sprintf("%s, broker %d restarted", step, i))
		}
	}
	roll("SCRAM on", []string{"--kafka-authentication", "scram-sha-512"})
	// Every listener now asks for SASL: a client without a login is
	// disconnected.
	anonymous := newClient(t, c.KafkaAddresses(), kgo.RetryTimeout(2*time.Second))
	if err := anonymous.Ping(testContext(t, 10*time.Second)); err == nil {
		t.Fatal("a client without a login was answered after SCRAM was turned on")
	}
	roll("SCRAM off", nil)
	stopProducing()
	prod.wg.Wait()
	if err := prod.cl.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}

	if errs := prod.failures(); len(errs) > 0 {
		t.Errorf("%d records failed during the roll, the first: %v", len(errs), errs[0])
	}
	checkEachOnce(t, ctx, c, login, topic, prod.acknowledged())
}

// checkEachOnce reads topic from the start until it has seen every
// acknowledged record, or nothing new came for ten seconds, and checks that
// every acknowledged record is there exactly once.
func checkEachOnce(t *testing.T, ctx context.Context, c *brokertest.Cluster, login kgo.Opt, topic string, acked []ackedRecord) {
	t.Helper()
	consumer := newClient(t, c.KafkaAddresses(), login, kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	want := map[string]bool{}
	for _, r := range acked {
		want[r.value] = true
	}
	seen := map[string]int{}
	found := 0
	last := map[int32]int64{}
	for found < len(want) {
		pollCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		fs := consumer.PollFetches(pollCtx)
		cancel()
		if fs.NumRecords() == 0 && (pollCtx.Err() != nil || ctx.Err() != nil) {
			break
		}
		fs.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("fetch %s-%d: %v", topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			v := string(r.Value)
			seen[v]++
			if seen[v] == 1 && want[v] {
				found++
			}
			last[r.Partition] = r.Offset
		})
	}
	var missing []ackedRecord
	duplicated := 0
	for _, r := range acked {
		switch seen[r.value] {
		case 0:
			missing = append(missing, r)
		case 1:
		default:
			duplicated++
		}
	}
	t.Logf("%d records acknowledged, %d distinct values in the topic", len(acked), len(seen))
	if len(missing) > 0 || duplicated > 0 {
		first := ackedRecord{}
		if len(missing) > 0 {
			first = missing[0]
		}
		t.Errorf("of %d acknowledged records, %d are missing (the first %+v; the last offsets read %v) and %d there more than once",
			len(acked), len(missing), first, last, duplicated)
	}
}
