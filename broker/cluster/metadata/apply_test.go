package metadata

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestRegisterSetsEpochAndUnfences(t *testing.T) {
	b := newBuilder(t).brokers("", "")
	if got := b.img.Broker(1).Epoch; got != 2 {
		t.Fatalf("epoch = %d, want the registration index 2", got)
	}
	b.do(brokerCmd(CmdControlledStop, 1))
	if br := b.img.Broker(1); !br.Fenced || !br.ShuttingDown {
		t.Fatalf("after controlled shutdown: %+v", br)
	}
	b.do(register(1, "r1"))
	if br := b.img.Broker(1); br.Fenced || br.ShuttingDown || br.Rack != "r1" || br.Epoch != 4 {
		t.Fatalf("after re-registration: %+v", br)
	}
}

// TestRegisterRecordsTheKafkaAddress: a registration carries the broker's
// Kafka listener, and a later one (a restart with another address)
// replaces it.
func TestRegisterRecordsTheKafkaAddress(t *testing.T) {
	b := newBuilder(t).brokers("")
	c := register(0, "")
	c.RegisterBroker.KafkaAddress = "kairo-0.kairo-headless:9092"
	b.do(c)
	if got := b.img.Broker(0).KafkaAddress; got != "kairo-0.kairo-headless:9092" {
		t.Fatalf("Kafka address %q after registration", got)
	}
	c.RegisterBroker.KafkaAddress = "10.0.0.7:9092"
	b.do(c)
	if got := b.img.Broker(0).KafkaAddress; got != "10.0.0.7:9092" {
		t.Fatalf("Kafka address %q after a second registration", got)
	}
}

// TestRegisterBeforeFencingEndsTheOldIncarnation: broker 0 crashes and
// a new process registers before the controller fenced the old one. The
// old leaderships must not go on in the same epoch. Where the controller
// has heard from another in-sync replica, that replica takes over in a new
// epoch and broker 0 leaves the ISR (its log may have lost a tail); a
// partition broker 0 alone holds stays with it, in a new epoch. When the
// controller has heard from nobody (the whole cluster is restarting), the
// partitions stay where they are, led in new epochs, rather than move to
// brokers that may be down. A registration repeated by the same process
// changes nothing.
func TestRegisterBeforeFencingEndsTheOldIncarnation(t *testing.T) {
	setup := func() (*builder, []Partition) {
		b := newBuilder(t)
		for id := range 3 {
			b.do(registerIncarnation(id, fmt.Sprintf("first-%d", id), nil))
		}
		b.do(createTopic("t", []int{0, 1, 2}, []int{1, 0, 2}))
		b.do(createTopic("solo", []int{0}))
		return b, []Partition{*b.part("t", 0), *b.part("t", 1), *b.part("solo", 0)}
	}
	type want struct {
		leader   int
		newEpoch bool
		isr      []int
	}
	for _, tc := range []struct {
		name        string
		incarnation string
		heard       []int
		want        [3]want // t-0 (led by 0), t-1 (followed by 0), solo-0 (held by 0 alone)
	}{
		{"restart, others up", "second", []int{1, 2}, [3]want{{1, true, []int{1, 2}}, {1, false, []int{1, 2}}, {0, true, []int{0}}}},
		{"restart, only broker 2 heard from", "second", []int{2}, [3]want{{2, true, []int{1, 2}}, {1, false, []int{1, 2}}, {0, true, []int{0}}}},
		{"restart, nobody heard from", "second", nil, [3]want{{0, true, []int{0, 1, 2}}, {1, false, []int{1, 0, 2}}, {0, true, []int{0}}}},
		{"the same process again", "first-0", []int{1, 2}, [3]want{{0, false, []int{0, 1, 2}}, {1, false, []int{1, 0, 2}}, {0, false, []int{0}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, before := setup()
			b.do(registerIncarnation(0, tc.incarnation, tc.heard))
			if br := b.img.Broker(0); br.Fenced || br.Epoch != b.index || br.Incarnation != tc.incarnation {
				t.Fatalf("broker 0 after registering again: %+v", br)
			}
			for i, p := range []*Partition{b.part("t", 0), b.part("t", 1), b.part("solo", 0)} {
				w := tc.want[i]
				if p.Leader != w.leader || (p.LeaderEpoch > before[i].LeaderEpoch) != w.newEpoch || !slices.Equal(p.ISR, w.isr) {
					t.Errorf("partition %d: leader %d epoch %d (was %d) ISR %v; want leader %d, new epoch %v, ISR %v",
						i, p.Leader, p.LeaderEpoch, before[i].LeaderEpoch, p.ISR, w.leader, w.newEpoch, w.isr)
				}
			}
		})
	}
}

func TestCreateTopic(t *testing.T) {
	b := newBuilder(t).brokers("", "", "")
	b.do(createTopic("orders", []int{0, 1, 2}, []int{1, 2, 0}))
	p := b.part("orders", 1)
	if p.Leader != 1 || !slices.Equal(p.ISR, []int{1, 2, 0}) || p.LeaderEpoch != 0 {
		t.Fatalf("partition 1 = %+v", p)
	}
	b.expect(createTopic("orders", []int{0}), ErrTopicExists)
	b.expect(createTopic("x"), ErrInvalidPartitions)
	b.expect(createTopic("y", []int{0, 0}), ErrInvalidAssignment)
	b.expect(createTopic("y", []int{0, 7}), ErrInvalidAssignment)
	b.expect(createTopic("y", []int{0, 1}, []int{0}), ErrInvalidReplicationFactor)
	b.expect(createTopic("__y", []int{0}), ErrInvalidTopic)
	b.expect(createTopic("a/b", []int{0}), ErrInvalidTopic)
	bad := createTopic("z", []int{0})
	bad.CreateTopic.Config = map[string]string{"retention.ms": "soon"}
	b.expect(bad, ErrInvalidConfig)
}

func TestCreateTopicWithFencedReplicaLeavesItOutOfISR(t *testing.T) {
	b := newBuilder(t).brokers("", "")
	b.do(brokerCmd(CmdFenceBroker, 0))
	b.do(createTopic("t", []int{0, 1}))
	if p := b.part("t", 0); p.Leader != 1 || !slices.Equal(p.ISR, []int{1}) {
		t.Fatalf("partition = %+v", p)
	}
}

func TestDeleteTopicAndCreatePartitions(t *testing.T) {
	b := newBuilder(t).brokers("", "")
	b.do(createTopic("t", []int{0, 1}))
	b.do(Command{Type: CmdCreatePartitions, CreatePartitions: &CreatePartitions{Topic: "t", Assignments: [][]int{{1, 0}}}})
	if n := len(b.img.Topic("t").Partitions); n != 2 || b.part("t", 1).Leader != 1 {
		t.Fatalf("partitions = %d", n)
	}
	b.expect(Command{Type: CmdCreatePartitions, CreatePartitions: &CreatePartitions{Topic: "t", Assignments: [][]int{{1}}}},
		ErrInvalidReplicationFactor)
	b.do(Command{Type: CmdDeleteTopic, DeleteTopic: &DeleteTopic{Name: "t"}})
	b.expect(Command{Type: CmdDeleteTopic, DeleteTopic: &DeleteTopic{Name: "t"}}, ErrUnknownTopic)
}

// TestDeleteTopicByID: a delete that names the topic's ID deletes only that
// topic; once the name belongs to a topic created again, it is refused and
// the new topic stays.
func TestDeleteTopicByID(t *testing.T) {
	b := newBuilder(t).brokers("")
	b.do(createTopic("t", []int{0}))
	oldID := b.img.Topic("t").ID
	b.do(Command{Type: CmdDeleteTopic, DeleteTopic: &DeleteTopic{Name: "t", ID: oldID}})
	recreate := createTopic("t", []int{0})
	recreate.CreateTopic.ID = oldID + "-again"
	b.do(recreate)
	b.expect(Command{Type: CmdDeleteTopic, DeleteTopic: &DeleteTopic{Name: "t", ID: oldID}}, ErrUnknownTopic)
	if got := b.img.Topic("t"); got == nil || got.ID != oldID+"-again" {
		t.Fatalf("after a delete of the old ID the topic is %+v", got)
	}
}

func TestAlterConfig(t *testing.T) {
	b := newBuilder(t).brokers("")
	b.do(createTopic("t", []int{0}))
	set := func(replace bool, kv map[string]string, del ...string) Command {
		return Command{Type: CmdAlterConfig, AlterConfig: &AlterConfig{Topic: "t", Set: kv, Delete: del, Replace: replace}}
	}
	b.do(set(false, map[string]string{"retention.ms": "1000", "min.insync.replicas": "1"}))
	b.do(set(false, nil, "retention.ms"))
	if c := b.img.Topic("t").Config; len(c) != 1 || c["min.insync.replicas"] != "1" {
		t.Fatalf("config = %v", c)
	}
	// A value an older version accepted under other bounds still applies
	// when the log is replayed (the controller refuses it as a new value:
	// ValidateConfig).
	b.do(set(true, map[string]string{"segment.bytes": "1024"}))
	if c := b.img.Topic("t").Config; len(c) != 1 || c["segment.bytes"] != "1024" {
		t.Fatalf("config after replace = %v", c)
	}
	if err := ValidateConfig(map[string]string{"segment.bytes": "1024"}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("ValidateConfig accepted segment.bytes=1024: %v", err)
	}
	b.expect(set(false, map[string]string{"colour": "blue"}), ErrInvalidConfig)
	b.expect(set(false, map[string]string{"cleanup.policy": "compact"}), ErrInvalidConfig)
}

func TestFenceMovesLeadershipWithinISR(t *testing.T) {
	b := newBuilder(t).brokers("", "", "")
	b.do(createTopic("t", []int{0, 1, 2}))
	before := *b.part("t", 0)
	b.do(brokerCmd(CmdFenceBroker, 0))
	p := b.part("t", 0)
	if p.Leader != 1 || !slices.Equal(p.ISR, []int{1, 2}) {
		t.Fatalf("after fence: %+v", p)
	}
	if p.LeaderEpoch != before.LeaderEpoch+1 || p.PartitionEpoch != before.PartitionEpoch+1 {
		t.Fatalf("epochs %d/%d, before %d/%d", p.LeaderEpoch, p.PartitionEpoch, before.LeaderEpoch, before.PartitionEpoch)
	}
	// The last ISR member keeps its place so that it leads again when back.
	b.do(brokerCmd(CmdFenceBroker, 1))
	b.do(brokerCmd(CmdFenceBroker, 2))
	p = b.part("t", 0)
	if p.Leader != NoLeader || !slices.Equal(p.ISR, []int{2}) {
		t.Fatalf("all fenced: %+v", p)
	}
	b.do(brokerCmd(CmdUnfenceBroker, 0))
	if p = b.part("t", 0); p.Leader != NoLeader {
		t.Fatalf("out-of-sync broker 0 became leader without unclean election: %+v", p)
	}
	b.do(brokerCmd(CmdUnfenceBroker, 2))
	if p = b.part("t", 0); p.Leader != 2 {
		t.Fatalf("returning ISR member did not lead: %+v", p)
	}
}

func TestUncleanElection(t *testing.T) {
	b := newBuilder(t).brokers("", "")
	b.do(createTopic("t", []int{0, 1}))
	b.do(brokerCmd(CmdFenceBroker, 1)) // ISR [0]
	b.do(brokerCmd(CmdFenceBroker, 0)) // ISR [0], no leader
	b.do(brokerCmd(CmdUnfenceBroker, 1))
	if p := b.part("t", 0); p.Leader != NoLeader {
		t.Fatalf("unclean leader by default: %+v", p)
	}
	b.do(Command{Type: CmdAlterConfig, AlterConfig: &AlterConfig{Topic: "t",
		Set: map[string]string{ConfigUncleanElection: "true"}}})
	if p := b.part("t", 0); p.Leader != 1 || !slices.Equal(p.ISR, []int{1}) {
		t.Fatalf("unclean election allowed: %+v", p)
	}
}

func TestAlterISRValidation(t *testing.T) {
	b := newBuilder(t).brokers("", "", "")
	b.do(createTopic("t", []int{0, 1, 2}))
	p := b.part("t", 0)
	b.do(alterISR(p, "t", 0, 2))
	p2 := b.part("t", 0)
	if !slices.Equal(p2.ISR, []int{0, 2}) || p2.PartitionEpoch != p.PartitionEpoch+1 || p2.LeaderEpoch != p.LeaderEpoch {
		t.Fatalf("after shrink: %+v", p2)
	}
	b.expect(alterISR(p, "t", 0, 1, 2), ErrStalePartitionEpoch)
	stale := alterISR(p2, "t", 0, 1, 2)
	stale.AlterISR.LeaderEpoch--
	b.expect(stale, ErrFencedLeaderEpoch)
	wrong := alterISR(p2, "t", 1, 2)
	wrong.AlterISR.Leader = 1
	b.expect(wrong, ErrNotLeader)
	b.expect(alterISR(p2, "t", 2), ErrInvalidISR)    // leader dropped
	b.expect(alterISR(p2, "t", 0, 5), ErrInvalidISR) // not a replica
	b.expect(alterISR(p2, "t", 0, 0), ErrInvalidISR)
	b.do(brokerCmd(CmdFenceBroker, 1))
	b.expect(alterISR(b.part("t", 0), "t", 0, 1, 2), ErrInvalidISR) // fenced broker cannot join
	b.do(alterISR(b.part("t", 0), "t", 2, 0))                       // order normalised to replicas
	if got := b.part("t", 0).ISR; !slices.Equal(got, []int{0, 2}) {
		t.Fatalf("ISR = %v", got)
	}
}

func TestReassignAddsThenRemoves(t *testing.T) {
	b := newBuilder(t).brokers("", "", "", "")
	b.do(createTopic("t", []int{0, 1, 2}))
	b.do(reassign("t", 0, 1, 2, 3))
	p := b.part("t", 0)
	if !slices.Equal(p.Replicas, []int{1, 2, 3, 0}) || !slices.Equal(p.Adding, []int{3}) || !slices.Equal(p.Removing, []int{0}) {
		t.Fatalf("during reassignment: %+v", p)
	}
	if p.Leader != 0 {
		t.Fatalf("leader moved before the new replica caught up: %+v", p)
	}
	b.expect(alterISR(p, "t", 0, 1, 2, 3, 3), ErrInvalidISR)
	b.do(alterISR(p, "t", 0, 1, 2, 3))
	p = b.part("t", 0)
	if !slices.Equal(p.Replicas, []int{1, 2, 3}) || p.Reassigning() || p.Leader != 1 || !slices.Equal(p.ISR, []int{1, 2, 3}) {
		t.Fatalf("after catch-up: %+v", p)
	}
}

func TestReassignShrinkCompletesAtOnce(t *testing.T) {
	b := newBuilder(t).brokers("", "", "")
	b.do(createTopic("t", []int{0, 1, 2}))
	b.do(reassign("t", 0, 1))
	if p := b.part("t", 0); !slices.Equal(p.Replicas, []int{1}) || p.Leader != 1 || p.Reassigning() {
		t.Fatalf("after shrink: %+v", p)
	}
	b.expect(reassign("t", 0, 1, 9), ErrInvalidAssignment)
	b.expect(reassign("nope", 0, 1), ErrUnknownTopic)
	b.expect(reassign("t", 3, 1), ErrUnknownPartition)
}

func TestDrainCancelAndRemove(t *testing.T) {
	b := newBuilder(t).brokers("", "", "")
	b.do(createTopic("t", []int{0, 1}))
	b.do(brokerCmd(CmdDrain, 0))
	if s, _ := b.img.BrokerState(0); s != BrokerDraining {
		t.Fatalf("state = %v", s)
	}
	b.expect(brokerCmd(CmdRemoveBroker, 0), ErrBrokerNotEmpty)
	b.do(reassign("t", 0, 1, 2))
	b.do(brokerCmd(CmdCancelDrain, 0))
	// The original replicas come back; their order is not kept.
	if p := b.part("t", 0); len(p.Replicas) != 2 || !p.HasReplica(0) || !p.HasReplica(1) || p.Reassigning() {
		t.Fatalf("cancel drain did not revert: %+v", p)
	}
	b.do(brokerCmd(CmdDrain, 0))
	b.do(reassign("t", 0, 1, 2))
	b.do(alterISR(b.part("t", 0), "t", 0, 1, 2))
	if s, _ := b.img.BrokerState(0); s != BrokerDrained {
		t.Fatalf("state = %v, partition %+v", s, b.part("t", 0))
	}
	b.do(brokerCmd(CmdRemoveBroker, 0))
	if b.img.Broker(0) != nil {
		t.Fatal("broker still registered")
	}
	b.expect(brokerCmd(CmdRemoveBroker, 0), ErrUnknownBroker)
}

func TestPreferredLeaderElection(t *testing.T) {
	b := newBuilder(t).brokers("", "")
	b.do(createTopic("t", []int{0, 1}))
	b.do(brokerCmd(CmdFenceBroker, 0))
	b.do(brokerCmd(CmdUnfenceBroker, 0))
	if p := b.part("t", 0); p.Leader != 1 || p.InISR(0) {
		t.Fatalf("after return: %+v", p)
	}
	pref := Command{Type: CmdElectLeaders, ElectLeaders: &ElectLeaders{Preferred: true}}
	b.do(pref)
	if p := b.part("t", 0); p.Leader != 1 {
		t.Fatalf("out-of-sync preferred replica took leadership: %+v", p)
	}
	b.do(alterISR(b.part("t", 0), "t", 0, 1))
	b.do(pref)
	if p := b.part("t", 0); p.Leader != 0 {
		t.Fatalf("preferred leader not restored: %+v", p)
	}
}

func TestInitClusterOnce(t *testing.T) {
	b := newBuilder(t)
	b.do(Command{Type: CmdInitCluster, InitCluster: &InitCluster{ClusterID: "a"}})
	b.do(Command{Type: CmdInitCluster, InitCluster: &InitCluster{ClusterID: "b"}})
	if b.img.ClusterID != "a" {
		t.Fatalf("cluster id = %q", b.img.ClusterID)
	}
	b.expect(Command{Type: CmdCreateTopic}, ErrInvalidCommand)
	b.expect(Command{Type: "bogus", Broker: &BrokerRef{}}, ErrUnknownBroker)
}

// TestInternalTopicRefusesChanges applies every command that would change
// an internal topic's config, partition count or existence, as a raft
// entry would carry it: each is refused and leaves the image as it was,
// while the same commands on a user topic and the brokers' own changes to
// the internal topic (ISR, reassignment) still apply.
func TestInternalTopicRefusesChanges(t *testing.T) {
	b := newBuilder(t).brokers("", "")
	offsets := createTopic("__consumer_offsets", []int{0, 1}, []int{1, 0})
	offsets.CreateTopic.Internal = true
	offsets.CreateTopic.Config = map[string]string{"retention.ms": "-1"}
	b.do(offsets)
	b.do(createTopic("orders", []int{0, 1}))
	for _, topic := range []string{"__consumer_offsets", "orders"} {
		cmds := []Command{
			{Type: CmdAlterConfig, AlterConfig: &AlterConfig{Topic: topic, Set: map[string]string{"retention.ms": "1"}}},
			{Type: CmdAlterConfig, AlterConfig: &AlterConfig{Topic: topic, Replace: true}},
			{Type: CmdAlterConfig, AlterConfig: &AlterConfig{Topic: topic, Delete: []string{"retention.ms"}}},
			{Type: CmdCreatePartitions, CreatePartitions: &CreatePartitions{Topic: topic, Assignments: [][]int{{0, 1}}}},
			{Type: CmdDeleteTopic, DeleteTopic: &DeleteTopic{Name: topic}},
		}
		for _, c := range cmds {
			if topic == "orders" {
				b.do(c)
				continue
			}
			b.expect(c, ErrInternalTopic)
		}
	}
	if c := b.img.Topic("__consumer_offsets").Config; len(c) != 1 || c["retention.ms"] != "-1" {
		t.Fatalf("internal topic config = %v", c)
	}
	b.do(alterISR(b.part("__consumer_offsets", 0), "__consumer_offsets", 0))
	b.do(reassign("__consumer_offsets", 1, 1))
	if n := len(b.img.Topic("__consumer_offsets").Partitions); n != 2 {
		t.Fatalf("internal topic has %d partitions", n)
	}
}

func TestAllocateIDs(t *testing.T) {
	img := NewImage()
	steps := []struct {
		cmd  AllocateIDs
		want error
		next int64
	}{
		{AllocateIDs{Broker: 1, From: 0, Count: 1000}, nil, 1000},
		{AllocateIDs{Broker: 2, From: 0, Count: 1000}, ErrStaleProducerIDs, 1000}, // proposed again: not handed out twice
		{AllocateIDs{Broker: 2, From: 1000, Count: 10}, nil, 1010},
		{AllocateIDs{Broker: 2, From: 1010, Count: 0}, ErrInvalidCommand, 1010},
		{AllocateIDs{Broker: 2, From: 1010, Count: maxProducerIDBlock + 1}, ErrInvalidCommand, 1010},
	}
	for i, s := range steps {
		next, err := img.Apply(Command{Type: CmdAllocateIDs, AllocateIDs: &s.cmd}, uint64(i+1))
		if !errors.Is(err, s.want) || (s.want == nil) != (err == nil) {
			t.Fatalf("step %d %+v: %v, want %v", i, s.cmd, err, s.want)
		}
		if next.NextProducerID != s.next {
			t.Fatalf("step %d: next producer id %d, want %d", i, next.NextProducerID, s.next)
		}
		img = next
	}
	// A raft snapshot keeps it.
	b, err := json.Marshal(img)
	if err != nil {
		t.Fatal(err)
	}
	restored := NewImage()
	if err := json.Unmarshal(b, restored); err != nil || restored.NextProducerID != 1010 {
		t.Fatalf("restored next producer id %d, %v", restored.NextProducerID, err)
	}
}
