package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// TestElectPreferred: with automatic rebalancing off, a broker that
// restarts and rejoins every ISR leads none of its partitions again until
// asked. ElectPreferred, asked through a broker that is not the
// controller, moves them back and says so per partition: elected where
// the preferred replica took over, not needed where it already led,
// unknown for a topic or partition that does not exist, not available
// while the preferred replica is down; asked for every partition it
// answers only those it had to elect.
func TestElectPreferred(t *testing.T) {
	c := newTestCluster(t, 3)
	for _, v := range c.voters {
		cfg := c.config(v.ID, "")
		cfg.LeaderRebalanceInterval = -1
		c.start(cfg)
	}
	c.waitReady()
	c.syncISRs()
	ctx := ctxTimeout(t, 60*time.Second)
	ctl := c.controller()
	n := c.otherThan(ctl)
	if _, err := n.CreateTopic(ctx, CreateTopicRequest{Name: "e", Partitions: 6, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	inSync := func(what string) {
		c.eventually(20*time.Second, what, func() bool {
			for _, p := range n.Image().Topic("e").Partitions {
				if len(p.ISR) != 3 || p.Leader == metadata.NoLeader {
					return false
				}
			}
			return true
		})
	}
	inSync("every ISR full")

	// Restart the broker that is neither asked nor controller: its
	// partitions' leaderships move away and stay away.
	restarted := c.otherThan(ctl, n).ID()
	var preferredThere []int
	for _, p := range n.Image().Topic("e").Partitions {
		if p.Replicas[0] == restarted {
			preferredThere = append(preferredThere, p.ID)
		}
	}
	if len(preferredThere) == 0 {
		t.Fatalf("broker %d is preferred for no partition", restarted)
	}
	c.stop(restarted)
	c.eventually(20*time.Second, "leaderships off the stopped broker", func() bool {
		for _, p := range n.Image().Topic("e").Partitions {
			if p.Leader == restarted || p.Leader == metadata.NoLeader {
				return false
			}
		}
		return true
	})

	// While it is down its partitions cannot be given back to it.
	down, err := n.ElectPreferred(ctx, []metadata.TopicPartition{{Topic: "e", Partition: preferredThere[0]}})
	if err != nil || len(down) != 1 || down[0].Outcome != PreferredNotAvailable || down[0].Leader == restarted {
		t.Fatalf("preferred replica down: %+v %v", down, err)
	}

	c.restart(restarted)
	inSync("the restarted broker back in every ISR")

	other := -1
	for _, p := range n.Image().Topic("e").Partitions {
		if p.Replicas[0] != restarted {
			other = p.ID
		}
	}
	asked := []metadata.TopicPartition{{Topic: "e", Partition: other}, {Topic: "e", Partition: 6}, {Topic: "nope", Partition: 0}}
	for _, id := range preferredThere {
		asked = append(asked, metadata.TopicPartition{Topic: "e", Partition: id})
	}
	got, err := n.ElectPreferred(ctx, asked)
	if err != nil || len(got) != len(asked) {
		t.Fatalf("elect %v: %+v %v", asked, got, err)
	}
	want := []string{
		fmt.Sprintf("e-%d %s", other, ElectionNotNeeded), "e-6 " + string(ElectionUnknownPartition), "nope-0 " + string(ElectionUnknownTopic),
	}
	for _, id := range preferredThere {
		want = append(want, fmt.Sprintf("e-%d %s leader %d", id, Elected, restarted))
	}
	for i, e := range got {
		s := fmt.Sprintf("%s-%d %s", e.Topic, e.Partition, e.Outcome)
		if e.Outcome == Elected {
			s += fmt.Sprintf(" leader %d", e.Leader)
		}
		if s != want[i] {
			t.Errorf("answer %d: %s, want %s", i, s, want[i])
		}
	}
	for _, id := range preferredThere {
		if p := n.Image().Partition("e", id); p.Leader != restarted {
			t.Errorf("after the election, partition %d: %s", id, describe(p))
		}
	}

	// Everything leads where it prefers to: asked for every partition,
	// there is nothing to answer.
	if all, err := n.ElectPreferred(ctx, nil); err != nil || len(all) != 0 {
		t.Fatalf("elect every partition: %+v %v", all, err)
	}
}
