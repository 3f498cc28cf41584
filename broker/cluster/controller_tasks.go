package cluster

import (
	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// driveReassignments keeps drains moving: it plans moves for replicas
// still on draining brokers and replaces added replicas that can no
// longer catch up (fenced or draining brokers).
func (c *controller) driveReassignments() {
	img := c.n.Image()
	pl := metadata.NewPlanner(img)
	moves := pl.RepairMoves()
	for _, id := range img.BrokerIDs() {
		if !img.Broker(id).Draining {
			continue
		}
		m, err := pl.DrainMoves(id)
		if err != nil {
			key := "drain-infeasible"
			if !c.warned[key] {
				c.warned[key] = true
				c.n.log.Warn("Drain cannot progress", "draining", id, "error", err)
			}
			continue
		}
		moves = append(moves, m...)
	}
	if len(moves) > 0 {
		c.propose(metadata.Command{Type: metadata.CmdReassign, Reassign: &metadata.Reassign{Moves: moves}})
	}
}

// raiseOffsetsReplication grows __consumer_offsets towards the configured
// replica count as brokers join (it starts at the live broker count).
func (c *controller) raiseOffsetsReplication() {
	img := c.n.Image()
	t := img.Topic(OffsetsTopic)
	if t == nil {
		return
	}
	pl := metadata.NewPlanner(img)
	want := min(c.n.cfg.OffsetsTopicReplicas, pl.Eligible())
	if t.ReplicationFactor() >= want {
		return
	}
	for _, p := range t.Partitions {
		if p.Reassigning() {
			return
		}
	}
	moves, err := pl.ReplicationFactorMoves(OffsetsTopic, want)
	pl.SpreadLeaders(moves)
	if err == nil && len(moves) > 0 {
		if c.propose(metadata.Command{Type: metadata.CmdReassign, Reassign: &metadata.Reassign{Moves: moves}}) {
			c.n.log.Info("Raising the offsets topic's replication", "replication_factor", want)
		}
	}
}
