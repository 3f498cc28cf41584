package metadata

import (
	"fmt"
	"slices"
)

// DrainMoves returns the reassignments that move every replica off broker
// id: each partition keeps its other replicas and gains one on another
// eligible broker. A partition already moving off id is left alone. It
// fails with ErrReassignmentInfeasible when some partition finds no
// broker to move to.
func (pl *Planner) DrainMoves(id int) ([]Move, error) {
	var moves []Move
	var err error
	pl.img.eachPartition(func(t *Topic, p *Partition) {
		target := p.Target()
		if err != nil || !slices.Contains(target, id) {
			return
		}
		keep := without(target, []int{id})
		var to int
		if to, err = pl.pick(keep, []int{id}); err != nil {
			err = fmt.Errorf("%s-%d: %w", t.Name, p.ID, err)
			return
		}
		pl.replicas[to]--
		pl.moveLoad(id, to)
		moves = append(moves, Move{Topic: t.Name, Partition: p.ID, Target: append(keep, to)})
	})
	return moves, err
}

// ReplicationFactorMoves returns the reassignments that give every
// partition of the topic rf replicas. Replicas are added by placement and
// removed from the end of the list, out-of-sync ones first, never the
// leader.
func (pl *Planner) ReplicationFactorMoves(topic string, rf int) ([]Move, error) {
	t := pl.img.Topics[topic]
	if t == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTopic, topic)
	}
	if rf < 1 || rf > len(pl.eligible) {
		return nil, fmt.Errorf("%w: %d replicas, %d live brokers can hold them",
			ErrInvalidReplicationFactor, rf, len(pl.eligible))
	}
	var moves []Move
	for _, p := range t.Partitions {
		if p.Reassigning() {
			return nil, fmt.Errorf("%w: %s-%d", ErrReassignmentInProgress, topic, p.ID)
		}
		target := slices.Clone(p.Replicas)
		for len(target) < rf {
			id, err := pl.pick(target, nil)
			if err != nil {
				return nil, err
			}
			target = append(target, id)
		}
		for len(target) > rf {
			drop := pl.dropCandidate(p, target)
			pl.replicas[drop]--
			target = without(target, []int{drop})
		}
		if !slices.Equal(target, p.Replicas) {
			moves = append(moves, Move{Topic: topic, Partition: p.ID, Target: target})
		}
	}
	return moves, nil
}

// SpreadLeaders reorders the targets of moves so that preferred leaders
// (the first replica) spread over the brokers: in move order, a target's
// least-leading replica goes first when that brings its broker and the
// current first replica closer together. The controller applies it when it
// raises the replication of __consumer_offsets, which was created on the
// few brokers alive at the time, so that group coordinators do not all stay
// on the first broker to start; the preferred-leader election then moves
// leadership once the new first replica is in sync.
func (pl *Planner) SpreadLeaders(moves []Move) {
	for _, m := range moves {
		if len(m.Target) < 2 {
			continue
		}
		first := m.Target[0]
		best := 0
		for i, r := range m.Target {
			if pl.leaders[r] < pl.leaders[m.Target[best]] {
				best = i
			}
		}
		if pl.leaders[m.Target[best]]+1 >= pl.leaders[first] {
			continue
		}
		to := m.Target[best]
		copy(m.Target[1:best+1], m.Target[:best])
		m.Target[0] = to
		pl.leaders[first]--
		pl.leaders[to]++
	}
}

// dropCandidate picks the replica of target to remove when shrinking p:
// the last one that is out of sync or not live, else the last one that
// does not lead.
func (pl *Planner) dropCandidate(p *Partition, target []int) int {
	for i := len(target) - 1; i >= 0; i-- {
		r := target[i]
		if r != p.Leader && (!p.InISR(r) || !pl.img.Live(r)) {
			return r
		}
	}
	for i := len(target) - 1; i >= 0; i-- {
		if target[i] != p.Leader {
			return target[i]
		}
	}
	return target[len(target)-1]
}

// RebalanceMoves returns reassignments that even out the replica counts
// of the eligible brokers, moving one replica at a time from the most to
// the least loaded broker while that narrows the gap and keeps each
// partition on as many racks as before. Partitions being reassigned are
// not touched.
func (pl *Planner) RebalanceMoves() []Move {
	if len(pl.eligible) < 2 {
		return nil
	}
	targets := map[TopicPartition][]int{}
	for limit := 0; limit < 10000; limit++ {
		hi, lo := pl.eligible[0].ID, pl.eligible[0].ID
		for _, b := range pl.eligible {
			if pl.replicas[b.ID] > pl.replicas[hi] {
				hi = b.ID
			}
			if pl.replicas[b.ID] < pl.replicas[lo] {
				lo = b.ID
			}
		}
		if pl.replicas[hi]-pl.replicas[lo] <= 1 || !pl.moveOne(targets, hi, lo) {
			break
		}
	}
	var moves []Move
	pl.img.eachPartition(func(t *Topic, p *Partition) {
		tp := TopicPartition{Topic: t.Name, Partition: p.ID}
		if target, ok := targets[tp]; ok && !slices.Equal(target, p.Replicas) {
			moves = append(moves, Move{Topic: t.Name, Partition: p.ID, Target: target})
		}
	})
	return moves
}

// moveOne moves one replica from broker hi to broker lo, preferring a
// partition hi does not lead.
func (pl *Planner) moveOne(targets map[TopicPartition][]int, hi, lo int) bool {
	for _, leaderOK := range []bool{false, true} {
		moved := false
		pl.img.eachPartition(func(t *Topic, p *Partition) {
			tp := TopicPartition{Topic: t.Name, Partition: p.ID}
			cur, ok := targets[tp]
			if !ok {
				cur = p.Replicas
			}
			if moved || p.Reassigning() || !slices.Contains(cur, hi) || slices.Contains(cur, lo) ||
				(!leaderOK && p.Leader == hi) {
				return
			}
			next := slices.Clone(cur)
			next[slices.Index(next, hi)] = lo
			if pl.rackCount(next) < pl.rackCount(cur) {
				return
			}
			targets[tp] = next
			pl.moveLoad(hi, lo)
			moved = true
		})
		if moved {
			return true
		}
	}
	return false
}

// RepairMoves re-plans reassignments stuck on an added replica that
// cannot catch up because its broker is fenced, draining or gone: that
// replica is replaced by another eligible broker.
func (pl *Planner) RepairMoves() []Move {
	var moves []Move
	pl.img.eachPartition(func(t *Topic, p *Partition) {
		var bad []int
		for _, r := range p.Adding {
			if b := pl.img.Brokers[r]; b == nil || b.Fenced || b.Draining {
				bad = append(bad, r)
			}
		}
		if len(bad) == 0 {
			return
		}
		target := p.Target()
		keep := without(target, bad)
		for len(keep) < len(target) {
			id, err := pl.pick(keep, bad)
			if err != nil {
				return
			}
			keep = append(keep, id)
		}
		moves = append(moves, Move{Topic: t.Name, Partition: p.ID, Target: keep})
	})
	return moves
}
