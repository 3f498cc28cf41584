package kafka

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kairolog/kairolog/broker/api"
)

// groupConsumer is one kgo consumer of a group, polling in the background
// and committing what it processed after each poll.
type groupConsumer struct {
	cl   *kgo.Client
	stop context.CancelFunc
	done chan struct{}
}

// seen collects the values consumed by a group's consumers.
type seen struct {
	mu     sync.Mutex
	values map[string]int
}

func (s *seen) add(v string) {
	s.mu.Lock()
	s.values[v]++
	s.mu.Unlock()
}

// has reports whether every value in [from, to) was consumed.
func (s *seen) has(from, to int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := from; i < to; i++ {
		if s.values[strconv.Itoa(i)] == 0 {
			return false
		}
	}
	return true
}

func startGroupConsumer(t *testing.T, seeds []string, group, topic string, into *seen) *groupConsumer {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.HeartbeatInterval(500*time.Millisecond), kgo.SessionTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	gc := &groupConsumer{cl: cl, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(gc.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) { into.add(string(r.Value)) })
			if err := cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
				t.Logf("commit: %v", err)
			}
		}
	}()
	return gc
}

// close leaves the group: the client commits nothing more and sends
// LeaveGroup.
func (gc *groupConsumer) close() {
	gc.stop()
	<-gc.done
	gc.cl.Close()
}

// TestConsumerGroup: three kgo consumers in one group share a topic's
// partitions on three brokers and together consume every record; the
// group, its members and its committed offsets show in the HTTP API; when
// one leaves, the other two take over its partitions; and a consumer that
// joins after everyone left resumes from the group's commits, not from
// the start. kadm lists and describes the group.
func TestConsumerGroup(t *testing.T) {
	c := startCluster(t, 3, nil)
	ctx := testContext(t, 120*time.Second)
	const topic, group = "orders", "billing"
	if _, err := c.Client(0).CreateTopic(ctx, api.CreateTopicRequest{Name: topic, Partitions: 6, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	seeds := c.KafkaAddresses()
	produce := func(from, to int) {
		t.Helper()
		cl := newClient(t, seeds, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
		var rs []*kgo.Record
		for i := from; i < to; i++ {
			rs = append(rs, &kgo.Record{Value: []byte(strconv.Itoa(i))})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		cl.Close()
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if ctx.Err() != nil {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	describe := func() *api.GroupDescription {
		d, err := c.Client(1).DescribeGroup(ctx, group, topic)
		if err != nil {
			return &api.GroupDescription{}
		}
		return d
	}

	produce(0, 600)
	got := &seen{values: map[string]int{}}
	consumers := []*groupConsumer{
		startGroupConsumer(t, seeds, group, topic, got),
		startGroupConsumer(t, seeds, group, topic, got),
		startGroupConsumer(t, seeds, group, topic, got),
	}
	defer func() {
		for _, gc := range consumers {
			if gc != nil {
				gc.close()
			}
		}
	}()
	waitFor("the three consumers to read all 600 records", func() bool { return got.has(0, 600) })
	waitFor("the HTTP API to show three members and all 600 committed", func() bool {
		d := describe()
		return len(d.Members) == 3 && d.State == "Stable" && d.TotalLag == 0 && committed(d) == 600
	})
	d := describe()
	assigned := map[int32]string{}
	for _, m := range d.Members {
		for _, tp := range m.Assignment {
			for _, p := range tp.Partitions {
				if other, ok := assigned[p]; ok {
					t.Fatalf("partition %d assigned to %s and %s", p, other, m.ID)
				}
				assigned[p] = m.ID
			}
		}
	}
	if len(assigned) != 6 {
		t.Fatalf("assignments %+v cover %d of 6 partitions", d.Members, len(assigned))
	}

	adm := kadm.NewClient(newClient(t, seeds))
	listed, err := adm.ListGroups(ctx)
	if _, ok := listed[group]; err != nil || !ok {
		t.Fatalf("kadm lists %v (%v), want %s", listed.Groups(), err, group)
	}
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if g := described[group]; g.Err != nil || len(g.Members) != 3 || g.ProtocolType != "consumer" {
		t.Fatalf("kadm describes %+v", g)
	}
	offsets, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	offsets.Each(func(o kadm.OffsetResponse) { sum += o.At })
	if sum != 600 {
		t.Fatalf("kadm fetches committed offsets summing to %d, want 600", sum)
	}

	// One consumer leaves: the other two take over its partitions.
	consumers[0].close()
	consumers[0] = nil
	waitFor("the HTTP API to show two members", func() bool {
		d := describe()
		return len(d.Members) == 2 && d.State == "Stable"
	})
	produce(600, 900)
	waitFor("the two remaining consumers to read the 300 new records", func() bool { return got.has(600, 900) })
	waitFor("all 900 committed", func() bool { return committed(describe()) == 900 })

	// Everyone leaves; a new consumer resumes from the commits.
	for i, gc := range consumers {
		if gc != nil {
			gc.close()
			consumers[i] = nil
		}
	}
	waitFor("the group to be empty", func() bool { return describe().State == "Empty" })
	produce(900, 910)
	again := &seen{values: map[string]int{}}
	consumers[0] = startGroupConsumer(t, seeds, group, topic, again)
	waitFor("the new consumer to read the 10 new records", func() bool { return again.has(900, 910) })
	again.mu.Lock()
	defer again.mu.Unlock()
	for v := range again.values {
		if n, _ := strconv.Atoi(v); n < 900 {
			t.Fatalf("the new consumer read %s again: it did not resume from the group's commits", v)
		}
	}
}

// committed is the sum of a described group's committed offsets.
func committed(d *api.GroupDescription) int64 {
	var n int64
	for _, o := range d.Offsets {
		if o.CommittedOffset > 0 {
			n += o.CommittedOffset
		}
	}
	return n
}
