package cluster

import (
	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// driveReassignments keeps drains moving: it plans moves for replicas
// still on draining brokers and replaces added replicas that can no
// longer catch up (fenced or draining brokers). It reports false when its
// proposal failed; a drain that cannot progress waits for another image.
func (c *controller) driveReassignments() bool {
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
		return c.propose(metadata.Command{Type: metadata.CmdReassign, Reassign: &metadata.Reassign{Moves: moves}})
	}
	return true
}

// raiseOffsetsReplication grows __consumer_offsets towards the configured
// replica count as brokers join (it starts at the live broker count). It
// reports false when its proposal failed; a reassignment of the topic in
// progress ends with another image.
func (c *controller) raiseOffsetsReplication() bool {
	img := c.n.Image()
	t := img.Topic(OffsetsTopic)
	if t == nil {
		return true
	}
	pl := metadata.NewPlanner(img)
	want := min(c.n.cfg.OffsetsTopicReplicas, pl.Eligible())
	if t.ReplicationFactor() >= want {
		return true
	}
	for _, p := range t.Partitions {
		if p.Reassigning() {
			return true
		}
	}
	moves, err := pl.ReplicationFactorMoves(OffsetsTopic, want)
	pl.SpreadLeaders(moves)
	if err != nil || len(moves) == 0 {
		return true
	}
	if !c.propose(metadata.Command{Type: metadata.CmdReassign, Reassign: &metadata.Reassign{Moves: moves}}) {
		return false
	}
	c.n.log.Info("Raising the offsets topic's replication", "replication_factor", want)
	return true
}
