package cluster

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestThreeVotersBootstrapElectAndPlace(t *testing.T) {
	c := newTestCluster(t, 3)
	c.startAll()
	ctl := c.controller()
	for _, n := range c.running() {
		if got := n.ControllerID(); got != ctl.ID() {
			t.Fatalf("broker %d sees controller %d, want %d", n.ID(), got, ctl.ID())
		}
	}
	var other *Node
	for _, n := range c.running() {
		if n != ctl {
			other = n
		}
	}
	// Created through a broker that is not the controller: forwarded.
	topic, err := other.CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "orders", Partitions: 6, ReplicationFactor: 3})
	if err != nil {
		t.Fatal(err)
	}
	if other.Image().Topic("orders") == nil {
		t.Fatal("the forwarding broker's image does not show the topic it created")
	}
	leaders := map[int]int{}
	for _, p := range topic.Partitions {
		leaders[p.Leader]++
		if len(p.ISR) != 3 {
			t.Fatalf("partition %s", describe(p))
		}
	}
	for id := range 3 {
		if leaders[id] != 2 {
			t.Fatalf("leaders per broker = %v, want 2 each", leaders)
		}
	}
	if _, err := ctl.CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "orders", Partitions: 1, ReplicationFactor: 1}); !isErr(err, ErrTopicExists) {
		t.Fatalf("duplicate create: %v", err)
	}
	if _, err := other.CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "big", Partitions: 1, ReplicationFactor: 4}); !isErr(err, ErrInvalidReplicationFactor) {
		t.Fatalf("rf 4 on 3 brokers, forwarded: %v", err)
	}
	c.eventually(5*time.Second, "a cluster id everywhere", func() bool {
		for _, n := range c.running() {
			if n.Image().ClusterID == "" || n.Image().ClusterID != ctl.Image().ClusterID {
				return false
			}
		}
		return true
	})
	for _, s := range ctl.Brokers() {
		if !s.Voter || s.State != "alive" {
			t.Fatalf("broker summary %+v", s)
		}
	}
}

func TestVoterRestartDoesNotBootstrapAgain(t *testing.T) {
	c := newTestCluster(t, 3)
	c.startAll()
	if _, err := c.node(0).CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "t", Partitions: 2, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	victim := 1
	if c.controller().ID() == victim {
		victim = 2
	}
	epoch := c.node(0).Image().Broker(victim).Epoch
	// Restart from a raft snapshot plus the log entries after it.
	c.eventually(5*time.Second, "the victim to see the topic", func() bool { return c.node(victim).Image().Topic("t") != nil })
	if err := c.node(victim).raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.node(0).CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "after-snapshot", Partitions: 1, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	c.eventually(5*time.Second, "the victim to see the second topic", func() bool {
		return c.node(victim).Image().Topic("after-snapshot") != nil
	})
	c.stop(victim)
	n := c.restart(victim)
	if !n.hadState {
		t.Fatal("restarted voter found no raft state")
	}
	c.waitReady()
	if n.Image().Topic("t") == nil || n.Image().Topic("after-snapshot") == nil {
		t.Fatal("restarted voter lost a topic")
	}
	if got := n.Image().Broker(victim).Epoch; got <= epoch {
		t.Fatalf("registration epoch %d did not grow past %d", got, epoch)
	}
	cfg := n.raft.GetConfiguration()
	if err := cfg.Error(); err != nil || len(cfg.Configuration().Servers) != 3 {
		t.Fatalf("configuration after restart: %+v %v", cfg.Configuration(), err)
	}
}

func TestSingleBrokerThenJoiningNonVoters(t *testing.T) {
	c := newTestCluster(t, 1)
	c.startAll()
	c.syncISRs()
	n0 := c.node(0)
	offsets, err := n0.EnsureOffsetsTopic(ctxTimeout(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(offsets.Partitions) != DefaultOffsetsTopicPartitions || offsets.ReplicationFactor() != 1 || !offsets.Internal {
		t.Fatalf("offsets topic: %d partitions, rf %d", len(offsets.Partitions), offsets.ReplicationFactor())
	}
	n1 := c.start(c.config(1, ""))
	n2 := c.start(c.config(2, ""))
	c.waitReady()
	for _, n := range []*Node{n1, n2} {
		if n.hadState || n.Image().Broker(n.ID()).Voter {
			t.Fatalf("broker %d should have joined as a non-voter", n.ID())
		}
		s, ok, err := n0.raftServer(n.ID())
		if err != nil || !ok || s.Suffrage != raft.Nonvoter {
			t.Fatalf("raft configuration entry of %d: %+v %v %v", n.ID(), s, ok, err)
		}
	}
	// Non-voters forward admin requests too.
	if _, err := n2.CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "t", Partitions: 3, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	c.eventually(15*time.Second, "__consumer_offsets raised to 3 replicas", func() bool {
		t := n2.Image().Topic(OffsetsTopic)
		for _, p := range t.Partitions {
			if len(p.Replicas) != 3 || p.Reassigning() {
				return false
			}
		}
		return true
	})
}
