package cluster

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestControlledShutdownMovesLeadershipAtOnce(t *testing.T) {
	c := newTestCluster(t, 3)
	for _, v := range c.voters {
		cfg := c.config(v.ID, "")
		cfg.LeaderRebalanceInterval = 300 * time.Millisecond
		c.start(cfg)
	}
	c.waitReady()
	c.syncISRs()
	if _, err := c.node(0).CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "t", Partitions: 6, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	victim := c.node(1)
	if r, err := victim.SafeToRestart(1); err != nil || !r.Safe {
		t.Fatalf("safe-to-restart before: %+v %v", r, err)
	}
	if err := victim.ControlledShutdown(ctxTimeout(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	// No session timeout to wait for: the image already has new leaders.
	img := victim.Image()
	for _, p := range img.Topic("t").Partitions {
		if p.Leader == 1 || p.Leader < 0 || p.InISR(1) {
			t.Fatalf("after controlled shutdown: %s", describe(p))
		}
	}
	if s, _ := img.BrokerState(1); s.String() != "fenced" {
		t.Fatalf("state %v", s)
	}
	// Heartbeats of the stopping broker must not unfence it.
	time.Sleep(2 * DefaultHeartbeatInterval)
	if !c.node(0).Image().Broker(1).Fenced {
		t.Fatal("a heartbeat unfenced a broker in controlled shutdown")
	}
	c.stop(1)
	c.restart(1)
	c.waitReady()
	c.eventually(10*time.Second, "broker 1 to lead its preferred partitions again", func() bool {
		s, err := c.node(0).Broker(1)
		return err == nil && s.State == "alive" && s.InSync && s.Leaders == 2
	})
}

func TestDrainThenRemove(t *testing.T) {
	c := newTestCluster(t, 3)
	c.startAll()
	c.start(c.config(3, ""))
	c.waitReady()
	c.syncISRs()
	n0 := c.node(0)
	if _, err := n0.CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "t", Partitions: 8, ReplicationFactor: 2}); err != nil {
		t.Fatal(err)
	}
	if s, _ := n0.Broker(3); s.Partitions == 0 {
		t.Fatal("the non-voter got no replicas")
	}
	if err := n0.RemoveBroker(ctxTimeout(t, 5*time.Second), 3); !isErr(err, ErrBrokerNotEmpty) {
		t.Fatalf("remove before drain: %v", err)
	}
	// Drained through the non-voter itself, forwarded to the controller.
	remaining, err := c.node(3).Drain(ctxTimeout(t, 5*time.Second), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("drain accepted, %d replicas to move", remaining)
	c.eventually(15*time.Second, "broker 3 drained", func() bool {
		s, _ := n0.Broker(3)
		return s.State == "drained" && s.Partitions == 0
	})
	for _, p := range n0.Image().Topic("t").Partitions {
		if len(p.Replicas) != 2 || len(p.ISR) != 2 || p.Leader < 0 {
			t.Fatalf("after drain: %s", describe(p))
		}
	}
	if err := c.node(1).RemoveBroker(ctxTimeout(t, 5*time.Second), 3); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := c.controller().raftServer(3); ok {
		t.Fatal("broker 3 is still in the raft configuration")
	}
	c.eventually(5*time.Second, "broker 3 gone from every image", func() bool {
		for _, n := range c.running() {
			// Broker 3's own raft shut down when it was removed; its image stays as it was.
			if n.ID() != 3 && n.Image().Broker(3) != nil {
				return false
			}
		}
		return true
	})
	// Still running, the removed broker cannot register again.
	time.Sleep(3 * DefaultHeartbeatInterval)
	if n0.Image().Broker(3) != nil {
		t.Fatal("the removed broker registered again")
	}
	if err := n0.RemoveBroker(ctxTimeout(t, 5*time.Second), 3); !isErr(err, ErrUnknownBroker) {
		t.Fatalf("second remove: %v", err)
	}
	// Three brokers hold rf=2 for 8 partitions; draining two would leave one.
	if _, err := n0.Drain(ctxTimeout(t, 5*time.Second), 2); err != nil {
		t.Fatal(err)
	}
	if _, err := n0.Drain(ctxTimeout(t, 5*time.Second), 1); !isErr(err, ErrReassignmentInfeasible) {
		t.Fatalf("infeasible drain: %v", err)
	}
	if err := n0.CancelDrain(ctxTimeout(t, 5*time.Second), 2); err != nil {
		t.Fatal(err)
	}
	if s, _ := n0.Broker(2); s.State != "alive" && s.State != "draining" {
		t.Fatalf("after cancel: %+v", s)
	}
}

// TestRemovedVoterRejoinsAsNonVoter: a voter drained, stopped and removed
// from the quorum comes back on its old raft state, in which it is still a
// voter. It joins as a new non-voter, without unseating the controller
// (the quorum refuses its election attempts while it is not a member).
func TestRemovedVoterRejoinsAsNonVoter(t *testing.T) {
	c := newTestCluster(t, 3)
	c.startAll()
	c.start(c.config(3, ""))
	c.waitReady()
	c.syncISRs()
	n0 := c.node(0)
	if _, err := n0.CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "t", Partitions: 4, ReplicationFactor: 2}); err != nil {
		t.Fatal(err)
	}
	if c.controller().ID() == 2 {
		if err := c.node(2).raft.LeadershipTransfer().Error(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := n0.Drain(ctxTimeout(t, 5*time.Second), 2); err != nil {
		t.Fatal(err)
	}
	c.eventually(15*time.Second, "broker 2 drained", func() bool {
		s, _ := n0.Broker(2)
		return s.State == "drained" && s.Partitions == 0
	})
	c.stop(2)
	if err := n0.RemoveBroker(ctxTimeout(t, 5*time.Second), 2); err != nil {
		t.Fatal(err)
	}
	ctl := c.controller()
	term := ctl.raft.CurrentTerm()

	c.restart(2)
	c.eventually(15*time.Second, "broker 2 registered again", func() bool {
		b := ctl.Image().Broker(2)
		return b != nil && !b.Fenced && c.node(2).Ready() == nil
	})
	if b := ctl.Image().Broker(2); b.Voter || b.Draining {
		t.Fatalf("broker 2 registered again as %+v, want a non-voter that is not draining", *b)
	}
	s, ok, err := ctl.raftServer(2)
	if err != nil || !ok || s.Suffrage != raft.Nonvoter {
		t.Fatalf("broker 2 in the raft configuration: %+v %v %v, want a non-voter", s, ok, err)
	}
	if !ctl.IsController() || ctl.raft.CurrentTerm() != term {
		t.Fatalf("the controller changed (term %d, was %d) while the removed voter came back", ctl.raft.CurrentTerm(), term)
	}
	// It follows the metadata from now on.
	if _, err := n0.CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "after", Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	c.eventually(5*time.Second, "broker 2 to see a new topic", func() bool { return c.node(2).Image().Topic("after") != nil })
}

func TestTopicAdminThroughAnyBroker(t *testing.T) {
	c := newTestCluster(t, 3)
	c.startAll()
	c.syncISRs()
	ctl := c.controller()
	var n *Node
	for _, o := range c.running() {
		if o != ctl {
			n = o
		}
	}
	ctx := ctxTimeout(t, 20*time.Second)
	if _, err := n.CreateTopic(ctx, CreateTopicRequest{Name: "t", Partitions: 2, ReplicationFactor: 1,
		Config: map[string]string{"retention.ms": "1000"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.CreatePartitions(ctx, "t", 1); !isErr(err, ErrInvalidPartitions) {
		t.Fatalf("fewer partitions: %v", err)
	}
	if top, err := n.CreatePartitions(ctx, "t", 4); err != nil || len(top.Partitions) != 4 {
		t.Fatalf("more partitions: %v", err)
	}
	cfg, err := n.AlterConfig(ctx, AlterConfigRequest{Topic: "t", Set: map[string]string{"min.insync.replicas": "2"}})
	if err != nil || len(cfg) != 2 {
		t.Fatalf("patch config: %v %v", cfg, err)
	}
	if _, err := n.AlterConfig(ctx, AlterConfigRequest{Topic: "t", Set: map[string]string{"bogus": "1"}}); !isErr(err, ErrInvalidConfig) {
		t.Fatalf("bad config: %v", err)
	}
	if moves, err := n.ChangeReplicationFactor(ctx, "t", 3); err != nil || moves != 4 {
		t.Fatalf("raise rf: %d %v", moves, err)
	}
	c.eventually(10*time.Second, "rf 3 everywhere", func() bool {
		for _, p := range n.Image().Topic("t").Partitions {
			if len(p.ISR) != 3 || p.Reassigning() {
				return false
			}
		}
		return true
	})
	if r, err := n.SafeToRestart(0); err != nil || !r.Safe {
		t.Fatalf("safe-to-restart with ISR 3 and min.insync 2: %+v %v", r, err)
	}
	// A stale AlterISR is refused with the epoch error the replica layer handles.
	p := n.Image().Partition("t", 0)
	stale := p.PartitionEpoch - 1
	_, err = n.AlterISR(ctx, alterReq(p.Leader, p.LeaderEpoch, stale, p.ISR))
	if !isErr(err, ErrStalePartitionEpoch) {
		t.Fatalf("stale AlterISR: %v", err)
	}
	if err := n.DeleteTopic(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if err := n.DeleteTopic(ctx, "t"); !isErr(err, ErrUnknownTopic) {
		t.Fatalf("second delete: %v", err)
	}
}
