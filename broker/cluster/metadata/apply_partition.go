package metadata

import (
	"fmt"
	"slices"
)

func (img *Image) alterISR(a AlterISR) error {
	t := img.Topics[a.Topic]
	if t == nil {
		return fmt.Errorf("%w: %q", ErrUnknownTopic, a.Topic)
	}
	p := img.Partition(a.Topic, a.Partition)
	if p == nil {
		return fmt.Errorf("%w: %s-%d", ErrUnknownPartition, a.Topic, a.Partition)
	}
	switch {
	case a.LeaderEpoch != p.LeaderEpoch:
		return fmt.Errorf("%w: %s-%d is at leader epoch %d, request has %d",
			ErrFencedLeaderEpoch, a.Topic, a.Partition, p.LeaderEpoch, a.LeaderEpoch)
	case a.Leader != p.Leader:
		return fmt.Errorf("%w: %s-%d is led by %d", ErrNotLeader, a.Topic, a.Partition, p.Leader)
	case a.PartitionEpoch != p.PartitionEpoch:
		return fmt.Errorf("%w: %s-%d is at partition epoch %d, request has %d",
			ErrStalePartitionEpoch, a.Topic, a.Partition, p.PartitionEpoch, a.PartitionEpoch)
	}
	if !slices.Contains(a.ISR, a.Leader) {
		return fmt.Errorf("%w: the leader %d must stay in the ISR", ErrInvalidISR, a.Leader)
	}
	for i, r := range a.ISR {
		switch {
		case !p.HasReplica(r):
			return fmt.Errorf("%w: %d is not a replica", ErrInvalidISR, r)
		case slices.Contains(a.ISR[:i], r):
			return fmt.Errorf("%w: %d listed twice", ErrInvalidISR, r)
		case !p.InISR(r) && !img.Live(r):
			return fmt.Errorf("%w: broker %d is fenced", ErrInvalidISR, r)
		}
	}
	q := p.copy()
	q.ISR = intersect(q.Replicas, a.ISR)
	img.completeReassignment(t, q)
	img.commit(t.Name, p, q)
	return nil
}

func (img *Image) electLeaders(e ElectLeaders) {
	elect := func(t *Topic, p *Partition) {
		q := p.copy()
		if e.Preferred {
			pref := q.Replicas[0]
			b := img.Brokers[pref]
			if pref != q.Leader && img.Live(pref) && q.InISR(pref) && !b.Draining &&
				!slices.Contains(q.Removing, pref) {
				q.Leader = pref
			}
		}
		img.reelect(t, q)
		img.commit(t.Name, p, q)
	}
	if len(e.Partitions) == 0 {
		img.eachPartition(elect)
		return
	}
	for _, tp := range e.Partitions {
		if p := img.Partition(tp.Topic, tp.Partition); p != nil {
			elect(img.Topics[tp.Topic], p)
		}
	}
}

// reelect keeps q's leader when it may still lead and otherwise picks the
// first replica (in preference order) that is live and in the ISR,
// preferring brokers that are not draining. With no such replica and
// unclean election allowed, a live replica that is not still being added
// leads with an ISR of itself; otherwise the partition has no leader.
func (img *Image) reelect(t *Topic, q *Partition) {
	if q.Leader != NoLeader && img.Live(q.Leader) && q.InISR(q.Leader) {
		return
	}
	q.Leader = NoLeader
	for _, pass := range []func(r int) bool{
		func(r int) bool { return q.InISR(r) && !img.Brokers[r].Draining },
		func(r int) bool { return q.InISR(r) },
	} {
		for _, r := range q.Replicas {
			if img.Live(r) && pass(r) {
				q.Leader = r
				return
			}
		}
	}
	if !UncleanElection(t) {
		return
	}
	for _, r := range q.Replicas {
		if img.Live(r) && !slices.Contains(q.Adding, r) {
			q.Leader, q.ISR = r, []int{r}
			return
		}
	}
}

func (img *Image) reassign(moves []Move) error {
	for _, m := range moves {
		if img.Partition(m.Topic, m.Partition) == nil {
			if img.Topics[m.Topic] == nil {
				return fmt.Errorf("%w: %q", ErrUnknownTopic, m.Topic)
			}
			return fmt.Errorf("%w: %s-%d", ErrUnknownPartition, m.Topic, m.Partition)
		}
		if err := img.validateReplicas(m.Target); err != nil {
			return fmt.Errorf("%s-%d: %w", m.Topic, m.Partition, err)
		}
	}
	for _, m := range moves {
		t := img.Topics[m.Topic]
		if err := img.reassignOne(t, t.Partitions[m.Partition], m.Target); err != nil {
			return err
		}
	}
	return nil
}

// reassignOne moves p towards target, replacing any reassignment in
// progress: replicas become target followed by the original replicas not
// in target, and the move completes at once when no replica is added.
func (img *Image) reassignOne(t *Topic, p *Partition, target []int) error {
	if slices.Equal(target, p.Target()) {
		return nil
	}
	orig := without(p.Replicas, p.Adding)
	q := p.copy()
	q.Adding = without(target, orig)
	q.Removing = without(orig, target)
	q.Replicas = append(slices.Clone(target), q.Removing...)
	q.ISR = intersect(q.ISR, q.Replicas)
	if len(q.ISR) == 0 {
		return fmt.Errorf("%w: %s-%d: no in-sync replica would remain", ErrReassignmentInfeasible, t.Name, p.ID)
	}
	if len(q.Adding) == 0 && len(q.Removing) == 0 {
		q.Adding, q.Removing = nil, nil
	}
	img.completeReassignment(t, q)
	img.reelect(t, q)
	img.commit(t.Name, p, q)
	return nil
}

// completeReassignment finishes q's reassignment once every added replica
// is in the ISR and some target replica is: the removed replicas leave the
// replica set and the ISR, and leadership moves off them.
func (img *Image) completeReassignment(t *Topic, q *Partition) {
	if !q.Reassigning() {
		return
	}
	target := q.Target()
	for _, r := range q.Adding {
		if !q.InISR(r) {
			return
		}
	}
	isr := intersect(q.ISR, target)
	if len(isr) == 0 {
		return
	}
	q.Replicas, q.ISR, q.Adding, q.Removing = target, isr, nil, nil
	if !slices.Contains(target, q.Leader) {
		q.Leader = NoLeader
	}
	img.reelect(t, q)
}
