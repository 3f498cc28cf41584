package kafka

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kairolog/kairolog/broker/api"
)

// TestDeleteOffsets: kadm's DeleteOffsets (OffsetDelete) deletes a group's
// committed offsets of a topic its consumer no longer reads and refuses,
// with GROUP_SUBSCRIBED_TO_TOPIC, those of the topic it reads; the HTTP
// API's delete-offsets answers the same through another broker, and both
// front doors then show the same offsets. An unknown group is
// GROUP_ID_NOT_FOUND.
func TestDeleteOffsets(t *testing.T) {
	c := startCluster(t, 3, nil)
	ctx := testContext(t, 90*time.Second)
	const group = "billing"
	for _, topic := range []string{"orders", "payments"} {
		if _, err := c.Client(0).CreateTopic(ctx, api.CreateTopicRequest{Name: topic, Partitions: 2, ReplicationFactor: 3}); err != nil {
			t.Fatal(err)
		}
	}
	seeds := c.KafkaAddresses()
	adm := kadm.NewClient(newClient(t, seeds))
	commits := kadm.Offsets{}
	for _, tp := range []struct {
		topic string
		p     int32
		at    int64
	}{{"orders", 0, 4}, {"payments", 0, 5}, {"payments", 1, 6}} {
		commits.Add(kadm.Offset{Topic: tp.topic, Partition: tp.p, At: tp.at, LeaderEpoch: -1})
	}
	// The group's coordinator may learn of the new topics a moment after
	// the broker that created them: UNKNOWN_TOPIC_OR_PARTITION until then.
	for {
		err := adm.CommitAllOffsets(ctx, group, commits)
		if err == nil {
			break
		}
		if !errors.Is(err, kerr.UnknownTopicOrPartition) || ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A consumer of orders joins the group.
	consumer := startGroupConsumer(t, seeds, group, "orders", &seen{values: map[string]int{}}, 0, nil)
	defer consumer.close()
	for {
		d, err := c.Client(2).DescribeGroup(ctx, group)
		if err == nil && d.State == "Stable" && len(d.Members) == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the consumer did not join: %+v %v", d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	deleted, err := adm.DeleteOffsets(ctx, group, kadm.TopicsSet{"orders": {0: {}}, "payments": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := deleted["orders"][0]; !errors.Is(err, kerr.GroupSubscribedToTopic) {
		t.Fatalf("orders-0, consumed by the group: %v, want GROUP_SUBSCRIBED_TO_TOPIC", err)
	}
	if err, ok := deleted["payments"][0]; !ok || err != nil {
		t.Fatalf("payments-0: answered %v, %v; want deleted", ok, err)
	}

	// Over HTTP, through broker 0, whichever broker coordinates the group.
	answers, err := c.Client(0).DeleteOffsets(ctx, group, []api.TopicPartition{{Topic: "payments", Partition: 1}, {Topic: "orders", Partition: 0}})
	if err != nil {
		t.Fatal(err)
	}
	want := []api.OffsetDeletion{{Topic: "payments", Partition: 1, Deleted: true},
		{Topic: "orders", Partition: 0, Code: api.CodeGroupSubscribedToTopic}}
	if len(answers) != len(want) {
		t.Fatalf("HTTP answered %+v, want %+v", answers, want)
	}
	for i, a := range answers {
		if a.Topic != want[i].Topic || a.Partition != want[i].Partition || a.Deleted != want[i].Deleted || a.Code != want[i].Code ||
			(a.Deleted == (a.Error != "")) {
			t.Fatalf("HTTP answered %+v, want %+v", answers, want)
		}
	}

	// What is left: orders-0 only, as kadm and the HTTP API see it.
	fetched, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	fetched.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			left = append(left, o.Topic)
		}
	})
	if o, ok := fetched.Lookup("orders", 0); !ok || o.At < 0 || len(left) != 1 {
		t.Fatalf("kadm fetches offsets of %v (orders-0 %+v), want orders-0 alone", left, o)
	}
	httpOffsets, err := c.Client(1).GroupOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if len(httpOffsets) != 1 || httpOffsets[0].Topic != "orders" || httpOffsets[0].Partition != 0 {
		t.Fatalf("the HTTP API shows offsets %+v, want orders-0 alone", httpOffsets)
	}

	if _, err := adm.DeleteOffsets(ctx, "nobody", kadm.TopicsSet{"orders": {0: {}}}); !errors.Is(err, kerr.GroupIDNotFound) {
		t.Fatalf("an unknown group: %v, want GROUP_ID_NOT_FOUND", err)
	}
}
