package kafka

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kairolog/kairolog/broker/api"
)

// TestConsumersStartingTogetherFormOneGeneration: three kgo consumers of a
// new group, started 300 ms apart against a broker with Kafka's
// group.initial.rebalance.delay.ms, form one first generation: the group
// settles at generation 1 and each consumer's first assignment is its one
// partition of three. Without the delay the first consumer forms a
// generation alone and is first given all three partitions.
func TestConsumersStartingTogetherFormOneGeneration(t *testing.T) {
	c := startCluster(t, 1, map[string]string{"group.initial.rebalance.delay.ms": "2000"})
	ctx := testContext(t, 60*time.Second)
	const topic, group = "payments", "payment-readers"
	if _, err := c.Client(0).CreateTopic(ctx, api.CreateTopicRequest{Name: topic, Partitions: 3, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	firstAssigned := map[int]int{} // consumer → partitions in its first assignment
	for i := range 3 {
		if i > 0 {
			time.Sleep(300 * time.Millisecond)
		}
		cl := newClient(t, c.KafkaAddresses(), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
				mu.Lock()
				defer mu.Unlock()
				if _, seen := firstAssigned[i]; !seen {
					firstAssigned[i] = len(ps[topic])
				}
			}))
		go func() {
			for ctx.Err() == nil { // polling keeps the member in the group
				if cl.PollFetches(ctx).IsClientClosed() {
					return
				}
			}
		}()
	}
	// The group is settled once the broker shows it stable with every
	// partition assigned and every consumer has been told its first
	// assignment (a consumer learns it from its SyncGroup answer, just
	// after the broker shows the group stable).
	var d *api.GroupDescription
	for {
		if ctx.Err() != nil {
			mu.Lock()
			t.Fatalf("the group never settled with three members: %+v; first assignments %v", d, firstAssigned)
		}
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		told := len(firstAssigned)
		mu.Unlock()
		var err error
		if d, err = c.Client(0).DescribeGroup(ctx, group, topic); err == nil &&
			len(d.Members) == 3 && d.State == "Stable" && len(assignedOnce(t, d)) == 3 && told == 3 {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if d.Generation != 1 || len(firstAssigned) != 3 || firstAssigned[0] != 1 || firstAssigned[1] != 1 || firstAssigned[2] != 1 {
		t.Fatalf("the group settled at generation %d; partitions in each consumer's first assignment: %v, want generation 1 and one each",
			d.Generation, firstAssigned)
	}
}
