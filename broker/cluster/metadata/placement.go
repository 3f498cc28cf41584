package metadata

import (
	"fmt"
	"slices"
)

// Planner decides replica placement for the controller. It starts from
// the load of an image (target replicas and leaders per broker) and
// counts every replica it places, so one plan spreads its own replicas
// too. Only live brokers that are not draining receive replicas.
//
// Placement spreads each partition's replicas across racks first, then
// across brokers, choosing the least loaded broker at each step; the
// first replica (the preferred leader) goes to the broker leading the
// fewest partitions, which balances leadership.
type Planner struct {
	img      *Image
	eligible []*Broker
	replicas map[int]int
	leaders  map[int]int
}

// NewPlanner returns a planner over img.
func NewPlanner(img *Image) *Planner {
	pl := &Planner{img: img, replicas: map[int]int{}, leaders: map[int]int{}}
	for _, id := range img.BrokerIDs() {
		b := img.Brokers[id]
		if !b.Fenced && !b.Draining {
			pl.eligible = append(pl.eligible, b)
		}
	}
	img.eachPartition(func(_ *Topic, p *Partition) {
		for _, r := range p.Target() {
			pl.replicas[r]++
		}
		if len(p.Replicas) > 0 {
			pl.leaders[p.Replicas[0]]++
		}
	})
	return pl
}

// Eligible returns how many brokers can receive replicas.
func (pl *Planner) Eligible() int { return len(pl.eligible) }

// MaxNewPartitions bounds the partitions one request may add, so that a
// mistyped count cannot stall the controller or bloat the metadata log.
const MaxNewPartitions = 10000

// Place returns the replica lists of n new partitions with rf replicas.
func (pl *Planner) Place(n, rf int) ([][]int, error) {
	if n < 1 || n > MaxNewPartitions {
		return nil, fmt.Errorf("%w: %d (1 to %d at a time)", ErrInvalidPartitions, n, MaxNewPartitions)
	}
	if rf < 1 || rf > len(pl.eligible) {
		return nil, fmt.Errorf("%w: %d replicas, %d live brokers can hold them",
			ErrInvalidReplicationFactor, rf, len(pl.eligible))
	}
	out := make([][]int, 0, n)
	for range n {
		var leader *Broker
		for _, b := range pl.eligible {
			if leader == nil || pl.leaders[b.ID] < pl.leaders[leader.ID] ||
				(pl.leaders[b.ID] == pl.leaders[leader.ID] && pl.replicas[b.ID] < pl.replicas[leader.ID]) {
				leader = b
			}
		}
		pl.leaders[leader.ID]++
		pl.replicas[leader.ID]++
		a := []int{leader.ID}
		for len(a) < rf {
			id, _ := pl.pick(a, nil)
			a = append(a, id)
		}
		out = append(out, a)
	}
	return out, nil
}

// pick chooses a broker to hold one more replica of a partition whose
// replicas are have, skipping the brokers in exclude, and counts it.
func (pl *Planner) pick(have, exclude []int) (int, error) {
	racks := map[string]int{}
	for _, r := range have {
		if b := pl.img.Brokers[r]; b != nil {
			racks[b.Rack]++
		}
	}
	var best *Broker
	better := func(b *Broker) bool {
		if best == nil {
			return true
		}
		if racks[b.Rack] != racks[best.Rack] {
			return racks[b.Rack] < racks[best.Rack]
		}
		return pl.replicas[b.ID] < pl.replicas[best.ID]
	}
	for _, b := range pl.eligible {
		if slices.Contains(have, b.ID) || slices.Contains(exclude, b.ID) {
			continue
		}
		if better(b) {
			best = b
		}
	}
	if best == nil {
		return 0, fmt.Errorf("%w: no live broker left to hold another replica of %v",
			ErrReassignmentInfeasible, have)
	}
	pl.replicas[best.ID]++
	return best.ID, nil
}

// moveLoad records that a replica moved from one broker to another.
func (pl *Planner) moveLoad(from, to int) {
	pl.replicas[from]--
	pl.replicas[to]++
}

// rackCount returns how many distinct racks hold replicas of a.
func (pl *Planner) rackCount(a []int) int {
	racks := map[string]bool{}
	for _, r := range a {
		if b := pl.img.Brokers[r]; b != nil {
			racks[b.Rack] = true
		}
	}
	return len(racks)
}
