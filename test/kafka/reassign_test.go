package kafka

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// TestPartitionReassignments: kadm's AlterPartitionAssignments moves a
// partition holding records onto the broker that had no replica of it; the
// moved-to replica joins the ISR, the one left out no longer holds the
// partition, a kgo consumer reads every record, and the HTTP API shows the
// new replicas. Bad replica lists, unknown partitions, the internal topic,
// a cancellation with nothing in progress and, when the client forbids it,
// another replica count are refused per partition. A
// move onto a stopped broker stays in progress, is listed by
// ListPartitionReassignments and by the HTTP API, and a cancellation
// undoes it.
func TestPartitionReassignments(t *testing.T) {
	c := startCluster(t, 3, nil)
	ctx := testContext(t, 120*time.Second)
	const topic = "moving"
	hc := c.Client(0)
	if _, err := hc.CreateTopic(ctx, api.CreateTopicRequest{Name: topic, Partitions: 2, ReplicationFactor: 2}); err != nil {
		t.Fatal(err)
	}
	seeds := c.KafkaAddresses()
	producer := newClient(t, seeds, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 20 {
		if err := producer.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 0, Value: fmt.Appendf(nil, "r%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	d, err := hc.DescribeTopic(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	old := d.Partitions[0].Replicas
	var spare int32
	for id := range int32(3) {
		if !slices.Contains(old, id) {
			spare = id
		}
	}
	left := old[1] // not in the new replicas
	target := []int32{spare, old[0]}

	adm := kadm.NewClient(newClient(t, seeds))
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign(topic, 0, target)
	req.Assign(topic, 1, []int32{0, 9})
	req.Assign(topic, 7, []int32{0, 1})
	req.CancelAssign(topic, 1) // overrides the bad list above: nothing in progress
	res, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[int32]error{0: nil, 1: kerr.NoReassignmentInProgress, 7: kerr.UnknownTopicOrPartition} {
		if r := res[topic][p]; !errors.Is(r.Err, want) || (want == nil && r.Err != nil) {
			t.Errorf("partition %d: %v %s, want %v", p, r.Err, r.ErrMessage, want)
		}
	}
	var bad kadm.AlterPartitionAssignmentsReq
	bad.Assign(topic, 1, []int32{0, 9})
	bad.Assign("__consumer_offsets", 0, []int32{0, 1, 2})
	if res, err = adm.AlterPartitionAssignments(ctx, bad); err != nil {
		t.Fatal(err)
	}
	if r := res[topic][1]; !errors.Is(r.Err, kerr.InvalidReplicaAssignment) {
		t.Errorf("replicas on broker 9: %v, want INVALID_REPLICA_ASSIGNMENT", r.Err)
	}
	if r := res["__consumer_offsets"][0]; !errors.Is(r.Err, kerr.InvalidTopicException) {
		t.Errorf("the internal topic: %v, want INVALID_TOPIC_EXCEPTION", r.Err)
	}
	// KIP-860: a client that forbids changing the replication factor.
	var three kadm.AlterPartitionAssignmentsReq
	three.Assign(topic, 1, []int32{0, 1, 2})
	if res, err = adm.AlterPartitionAssignments(kadm.ForbidAlterRf(ctx), three); err != nil {
		t.Fatal(err)
	}
	if r := res[topic][1]; !errors.Is(r.Err, kerr.InvalidReplicationFactor) {
		t.Errorf("three replicas for two, the factor forbidden to change: %v, want INVALID_REPLICATION_FACTOR", r.Err)
	}

	// The move completes: the new replica in sync, the old one's copy gone.
	for {
		d, err = hc.DescribeTopic(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		p := d.Partitions[0]
		if slices.Equal(p.Replicas, target) && len(p.ISR) == 2 && len(p.Adding)+len(p.Removing) == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("partition 0 after the move: %+v, want replicas %v in sync", p, target)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if p := d.Partitions[1]; len(p.Replicas) != 2 || len(p.Adding)+len(p.Removing) != 0 {
		t.Fatalf("partition 1 after refused moves: %+v", p)
	}
	for {
		dirs, err := adm.DescribeBrokerLogDirs(ctx, left, kadm.TopicsSet{topic: {0: {}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(dirs.SortedPartitions()) == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("broker %d still holds %s-0 after it left its replicas", left, topic)
		}
		time.Sleep(100 * time.Millisecond)
	}
	consumer := newClient(t, seeds, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	consumeRecords(t, ctx, consumer, 20)

	// A move onto a stopped broker waits for it: listed, then cancelled.
	p1 := d.Partitions[1].Replicas
	away := int32(-1)
	for id := range int32(3) {
		if !slices.Contains(p1, id) {
			away = id
		}
	}
	if err := c.Stop(int(away)); err != nil {
		t.Fatal(err)
	}
	var alive []string
	for id := range 3 {
		if id != int(away) {
			alive = append(alive, c.KafkaAddress(id))
		}
	}
	aliveClient := newClient(t, alive)
	adm = kadm.NewClient(aliveClient)
	var onto kadm.AlterPartitionAssignmentsReq
	onto.Assign(topic, 1, []int32{p1[0], away})
	if res, err = adm.AlterPartitionAssignments(ctx, onto); err != nil || res[topic][1].Err != nil {
		t.Fatalf("a move onto stopped broker %d: %v %+v", away, err, res)
	}
	// The broker kadm asks next may learn of the move a moment later.
	var listed kadm.ListPartitionReassignmentsResponses
	for deadline := time.Now().Add(10 * time.Second); len(listed) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if listed, err = adm.ListPartitionReassignments(ctx, kadm.TopicsSet{topic: {0: {}, 1: {}}}); err != nil {
			t.Fatal(err)
		}
	}
	l := listed[topic][1]
	if len(listed[topic]) != 1 || !slices.Equal(l.AddingReplicas, []int32{away}) || !slices.Equal(l.RemovingReplicas, []int32{p1[1]}) {
		t.Fatalf("reassignments listed: %+v, want partition 1 alone, adding %d and removing %d", listed, away, p1[1])
	}
	// Null topics ask for every reassignment in progress (kadm never
	// sends it); __consumer_offsets may be among them, its replicas
	// raised to three while the stopped broker was starting.
	var all *kmsg.ListPartitionReassignmentsResponse
	i := -1
	for deadline := time.Now().Add(10 * time.Second); i < 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		all, err = kmsg.NewPtrListPartitionReassignmentsRequest().RequestWith(ctx, aliveClient)
		if err != nil || all.ErrorCode != 0 {
			t.Fatalf("every reassignment in progress: %+v %v", all, err)
		}
		i = slices.IndexFunc(all.Topics, func(t kmsg.ListPartitionReassignmentsResponseTopic) bool { return t.Topic == topic })
	}
	if i < 0 || len(all.Topics[i].Partitions) != 1 || all.Topics[i].Partitions[0].Partition != 1 {
		t.Fatalf("every reassignment in progress: %+v, want %s-1 among them, alone of its topic", all.Topics, topic)
	}
	survivor := c.Client(int(p1[0]))
	if d, err = survivor.DescribeTopic(ctx, topic); err != nil || !slices.Equal(d.Partitions[1].Adding, []int32{away}) {
		t.Fatalf("the HTTP API describes partition 1 as %+v (%v), want adding %d", d.Partitions[1], err, away)
	}
	var undo kadm.AlterPartitionAssignmentsReq
	undo.CancelAssign(topic, 1)
	if res, err = adm.AlterPartitionAssignments(ctx, undo); err != nil || res[topic][1].Err != nil {
		t.Fatalf("cancel: %v %+v", err, res)
	}
	for deadline := time.Now().Add(10 * time.Second); len(listed) != 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if listed, err = adm.ListPartitionReassignments(ctx, kadm.TopicsSet{topic: {1: {}}}); err != nil {
			t.Fatal(err)
		}
	}
	if len(listed) != 0 {
		t.Fatalf("reassignments after the cancellation: %+v", listed)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		d, err = survivor.DescribeTopic(ctx, topic)
		if err != nil || len(d.Partitions[1].Adding) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || !slices.Equal(d.Partitions[1].Replicas, p1) || len(d.Partitions[1].Adding) != 0 {
		t.Fatalf("after the cancellation the HTTP API describes partition 1 as %+v (%v), want replicas %v", d.Partitions[1], err, p1)
	}
}
