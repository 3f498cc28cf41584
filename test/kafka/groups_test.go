package kafka

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/internal/brokertest"
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

// owners tracks which consumer of a group owns each partition, as the
// consumers' assignment callbacks say, and records every moment two
// consumers owned one partition or a consumer read a partition it did not
// own: a member gets a partition only after the member that had it gave
// it up, in every balancer, eager or cooperative.
type owners struct {
	mu         sync.Mutex
	owner      map[int32]int
	violations []string
}

func (o *owners) assigned(consumer int, ps map[string][]int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, parts := range ps {
		for _, p := range parts {
			if other, ok := o.owner[p]; ok && other != consumer {
				o.violations = append(o.violations, fmt.Sprintf("partition %d assigned to consumer %d while consumer %d owns it", p, consumer, other))
			}
			o.owner[p] = consumer
		}
	}
}

func (o *owners) revoked(consumer int, ps map[string][]int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, parts := range ps {
		for _, p := range parts {
			if o.owner[p] == consumer {
				delete(o.owner, p)
			}
		}
	}
}

func (o *owners) read(consumer int, p int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if other, ok := o.owner[p]; !ok || other != consumer {
		o.violations = append(o.violations, fmt.Sprintf("consumer %d read partition %d, owned by %d (owned: %v)", consumer, p, other, ok))
	}
}

func (o *owners) check(t *testing.T) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.violations) > 0 {
		t.Fatalf("a partition had two consumers: %v", o.violations)
	}
}

// startGroupConsumer starts consumer number id of group; own, when not
// nil, tracks the partitions it owns.
func startGroupConsumer(t *testing.T, seeds []string, group, topic string, into *seen, id int, own *owners, opts ...kgo.Opt) *groupConsumer {
	t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.HeartbeatInterval(500 * time.Millisecond), kgo.SessionTimeout(10 * time.Second)}, opts...)
	if own != nil {
		gone := func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { own.revoked(id, ps) }
		opts = append(opts,
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { own.assigned(id, ps) }),
			kgo.OnPartitionsRevoked(gone), kgo.OnPartitionsLost(gone))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	gc := &groupConsumer{cl: cl, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(gc.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) {
				if own != nil {
					own.read(id, r.Partition)
				}
				into.add(string(r.Value))
			})
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

// assignedOnce maps each partition a described group assigns to its
// member, failing the test if two members have one partition.
func assignedOnce(t *testing.T, d *api.GroupDescription) map[int32]string {
	t.Helper()
	assigned := map[int32]string{}
	for _, m := range d.Members {
		for _, tp := range m.Assignment {
			for _, p := range tp.Partitions {
				if other, ok := assigned[p]; ok {
					t.Fatalf("generation %d: partition %d assigned to %s and %s", d.Generation, p, other, m.ID)
				}
				assigned[p] = m.ID
			}
		}
	}
	return assigned
}

// TestConsumerGroup: three kgo consumers in one group share a topic's
// partitions on three brokers and together consume every record, with
// kgo's default balancer (cooperative-sticky) and with range: their
// leader assigns, the coordinator hands its assignment out. The group,
// its protocol, its members with their partitions and its committed
// offsets show in the HTTP API; when one leaves, the other two take over
// its partitions, and when one joins again it gets its share; no partition
// is ever owned or read by two consumers at once; and a consumer that
// joins after everyone left resumes from the group's commits, not from the
// start. kadm lists and describes the group.
func TestConsumerGroup(t *testing.T) {
	c := startCluster(t, 3, nil)
	for name, balancer := range map[string]kgo.GroupBalancer{
		"cooperative-sticky": kgo.CooperativeStickyBalancer(), "range": kgo.RangeBalancer(),
	} {
		t.Run(name, func(t *testing.T) { testConsumerGroup(t, c, balancer) })
	}
}

func testConsumerGroup(t *testing.T, c *brokertest.Cluster, balancer kgo.GroupBalancer) {
	ctx := testContext(t, 120*time.Second)
	topic, group := "orders-"+balancer.ProtocolName(), "billing-"+balancer.ProtocolName()
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
	own := &owners{owner: map[int32]int{}}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			own.check(t)
			if ctx.Err() != nil {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
		own.check(t)
	}
	// describe reads the group over HTTP; every description must give
	// each partition to one member at most.
	describe := func() *api.GroupDescription {
		d, err := c.Client(1).DescribeGroup(ctx, group, topic)
		if err != nil {
			return &api.GroupDescription{}
		}
		assignedOnce(t, d)
		return d
	}
	// settled: n members share the six partitions in a stable generation.
	settled := func(n int) func() bool {
		return func() bool {
			d := describe()
			return len(d.Members) == n && d.State == "Stable" && len(assignedOnce(t, d)) == 6
		}
	}
	opt := kgo.Balancers(balancer)

	produce(0, 600)
	got := &seen{values: map[string]int{}}
	consumers := []*groupConsumer{
		startGroupConsumer(t, seeds, group, topic, got, 0, own, opt),
		startGroupConsumer(t, seeds, group, topic, got, 1, own, opt),
		startGroupConsumer(t, seeds, group, topic, got, 2, own, opt),
	}
	defer func() {
		for _, gc := range consumers {
			if gc != nil {
				gc.close()
			}
		}
	}()
	waitFor("the three consumers to read all 600 records", func() bool { return got.has(0, 600) })
	waitFor("the HTTP API to show three members sharing the six partitions", settled(3))
	waitFor("all 600 committed", func() bool { d := describe(); return d.TotalLag == 0 && committed(d) == 600 })
	if d := describe(); d.ProtocolType != "consumer" || d.Protocol != balancer.ProtocolName() {
		t.Fatalf("the HTTP API shows protocol type %q and protocol %q, want consumer and %s", d.ProtocolType, d.Protocol, balancer.ProtocolName())
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
	if g := described[group]; g.Err != nil || len(g.Members) != 3 || g.ProtocolType != "consumer" || g.Protocol != balancer.ProtocolName() {
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
	waitFor("the HTTP API to show two members sharing the six partitions", settled(2))
	produce(600, 900)
	waitFor("the two remaining consumers to read the 300 new records", func() bool { return got.has(600, 900) })
	waitFor("all 900 committed", func() bool { return committed(describe()) == 900 })

	// One joins: it gets its share.
	consumers[0] = startGroupConsumer(t, seeds, group, topic, got, 3, own, opt)
	waitFor("the HTTP API to show three members sharing the six partitions", settled(3))
	produce(900, 1200)
	waitFor("the three consumers to read the 300 new records", func() bool { return got.has(900, 1200) })
	waitFor("all 1200 committed", func() bool { return committed(describe()) == 1200 })

	// Everyone leaves; a new consumer resumes from the commits.
	for i, gc := range consumers {
		if gc != nil {
			gc.close()
			consumers[i] = nil
		}
	}
	waitFor("the group to be empty", func() bool { return describe().State == "Empty" })
	produce(1200, 1210)
	again := &seen{values: map[string]int{}}
	consumers[0] = startGroupConsumer(t, seeds, group, topic, again, 4, nil, opt)
	waitFor("the new consumer to read the 10 new records", func() bool { return again.has(1200, 1210) })
	again.mu.Lock()
	defer again.mu.Unlock()
	for v := range again.values {
		if n, _ := strconv.Atoi(v); n < 1200 {
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
