package kafka

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
)

// TestElectLeaders: with auto.leader.rebalance.enable=false a broker that
// restarts and rejoins every ISR leads none of its partitions again. kadm's
// ElectLeaders gives them back to it (no error) and answers the others
// ELECTION_NOT_NEEDED; the HTTP API then shows the preferred replicas
// leading. An unclean election is INVALID_REQUEST; asked for every
// partition it answers only those it elected, and none once all lead
// where they prefer; the HTTP API's elect-leaders answers every partition
// of the topic.
func TestElectLeaders(t *testing.T) {
	// The check interval alone would move leaderships back within a second.
	c := startCluster(t, 3, map[string]string{"auto.leader.rebalance.enable": "false", "leader.imbalance.check.interval.seconds": "1"})
	ctx := testContext(t, 120*time.Second)
	const topic = "led"
	if _, err := c.Client(0).CreateTopic(ctx, api.CreateTopicRequest{Name: topic, Partitions: 6, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	hc := c.Client(0)
	waitFullISRs(t, ctx, hc, topic)

	const restarted = 2
	d, err := hc.DescribeTopic(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	preferred := map[int32]bool{}
	for _, p := range d.Partitions {
		preferred[p.Partition] = p.Replicas[0] == restarted
	}
	if err := c.Restart(restarted); err != nil {
		t.Fatal(err)
	}
	waitFullISRs(t, ctx, hc, topic)
	time.Sleep(2500 * time.Millisecond) // two check intervals
	if d, err = hc.DescribeTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Partitions {
		if p.Leader == restarted {
			t.Fatalf("partition %d went back to broker %d with auto.leader.rebalance.enable=false: %+v", p.Partition, restarted, p)
		}
	}

	adm := kadm.NewClient(newClient(t, c.KafkaAddresses()))
	all := kadm.TopicsSet{}
	for p := range preferred {
		all.Add(topic, p)
	}
	res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, all)
	if err != nil {
		t.Fatal(err)
	}
	for p, pref := range preferred {
		r, ok := res[topic][p]
		switch {
		case !ok:
			t.Errorf("partition %d: no answer in %+v", p, res)
		case pref && r.Err != nil:
			t.Errorf("partition %d, preferred broker %d: %v %s, want it elected", p, restarted, r.Err, r.ErrMessage)
		case !pref && !errors.Is(r.Err, kerr.ElectionNotNeeded):
			t.Errorf("partition %d, led by its preferred replica: %v, want ELECTION_NOT_NEEDED", p, r.Err)
		}
	}
	// Broker 0 may learn of the election a moment after the broker kadm
	// asked.
	d = waitPreferredLeaders(t, ctx, hc, topic)

	unclean, err := adm.ElectLeaders(ctx, kadm.ElectLiveReplica, all)
	if err != nil {
		t.Fatal(err)
	}
	if r := unclean[topic][0]; !errors.Is(r.Err, kerr.InvalidRequest) {
		t.Errorf("an unclean election: %+v, want INVALID_REQUEST", r)
	}
	// Asked for every partition, it answers only those it had to elect:
	// none of topic's now, and the internal topic's that broker 2 led
	// before its restart (once broker 2 is back in their ISRs); after
	// that, none at all.
	var everything kadm.ElectLeadersResults
	for {
		if everything, err = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil); err != nil {
			t.Fatal(err)
		}
		if _, ok := everything[topic]; ok {
			t.Fatalf("elect every partition: answers for %s, whose partitions all lead where they prefer: %+v", topic, everything[topic])
		}
		if len(everything) == 0 || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(everything) != 0 {
		t.Errorf("elect every partition again and again: %+v, want no answers in the end", everything)
	}

	answers, err := hc.ElectLeaders(ctx, topic, nil)
	if err != nil || len(answers) != len(preferred) {
		t.Fatalf("HTTP elect-leaders: %+v %v", answers, err)
	}
	for _, a := range answers {
		if a.Code != api.CodeElectionNotNeeded || a.Leader == nil || *a.Leader != d.Partitions[a.Partition].Replicas[0] {
			t.Errorf("HTTP elect-leaders, partition %d: %+v, want ELECTION_NOT_NEEDED and its preferred leader", a.Partition, a)
		}
	}
}

// waitFullISRs waits until every partition of topic has a leader and
// three in-sync replicas, and returns the topic as the HTTP API then
// describes it.
func waitFullISRs(t *testing.T, ctx context.Context, hc *client.Client, topic string) *api.TopicDescription {
	t.Helper()
	for {
		d, err := hc.DescribeTopic(ctx, topic)
		full := err == nil
		for i := 0; full && i < len(d.Partitions); i++ {
			full = len(d.Partitions[i].ISR) == 3 && d.Partitions[i].Leader >= 0
		}
		if full {
			return d
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for every ISR of %s to be full: %v (last: %+v)", topic, ctx.Err(), d)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitPreferredLeaders waits until every partition of topic is led by its
// first replica, failing after 10 s, and returns the topic as the HTTP API
// then describes it.
func waitPreferredLeaders(t *testing.T, ctx context.Context, hc *client.Client, topic string) *api.TopicDescription {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, err := hc.DescribeTopic(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		var off []api.PartitionDescription
		for _, p := range d.Partitions {
			if p.Leader != p.Replicas[0] {
				off = append(off, p)
			}
		}
		if len(off) == 0 {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("after ElectLeaders the HTTP API shows partitions led by other replicas than their first: %+v", off)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
