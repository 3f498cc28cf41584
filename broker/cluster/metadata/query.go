package metadata

import (
	"fmt"
	"slices"

	"github.com/kairolog/kairolog/broker/api"
)

// BrokerSummary returns broker id as GET /brokers/{id} reports it: its
// state, and the replicas it holds and leads. Partitions counts the
// replicas it holds, Leaders the partitions it leads, UnderReplicated
// those it leads whose ISR is smaller than their replica set; InSync
// reports whether it is in the ISR of every partition it holds (replicas
// still being added by a reassignment aside).
func (img *Image) BrokerSummary(id int) (api.BrokerInfo, error) {
	b := img.Brokers[id]
	if b == nil {
		return api.BrokerInfo{}, fmt.Errorf("%w: %d", ErrUnknownBroker, id)
	}
	state, _ := img.BrokerState(id)
	s := api.BrokerInfo{ID: int32(id), Address: b.HTTPAddress, Rack: b.Rack,
		State: state.String(), Voter: b.Voter, InSync: true}
	img.eachPartition(func(_ *Topic, p *Partition) {
		if !p.HasReplica(id) {
			return
		}
		s.Partitions++
		if p.Leader == id {
			s.Leaders++
			if p.UnderReplicated() {
				s.UnderReplicated++
			}
		}
		if !p.InISR(id) && !slices.Contains(p.Adding, id) {
			s.InSync = false
		}
	})
	return s, nil
}

// BrokerSummaries returns every broker's summary, by id.
func (img *Image) BrokerSummaries() []api.BrokerInfo {
	out := make([]api.BrokerInfo, 0, len(img.Brokers))
	for _, id := range img.BrokerIDs() {
		s, _ := img.BrokerSummary(id)
		out = append(out, s)
	}
	return out
}

// SafeToRestart reports whether stopping broker id now leaves every
// partition it holds with at least min.insync.replicas in-sync replicas,
// with the broker itself in every ISR. Partitions with no more replicas
// than min.insync.replicas can never satisfy this; they are listed in
// Reasons, not Blocking. defaultMinISR is the broker-wide
// min.insync.replicas. A fenced broker already serves nothing, so
// restarting it is reported safe.
func (img *Image) SafeToRestart(id, defaultMinISR int) (api.SafeToRestart, error) {
	b := img.Brokers[id]
	if b == nil {
		return api.SafeToRestart{}, fmt.Errorf("%w: %d", ErrUnknownBroker, id)
	}
	r := api.SafeToRestart{Broker: int32(id), Reasons: []string{}, Blocking: []api.BlockingPartition{}}
	if b.Fenced {
		r.Safe = true
		r.Reasons = append(r.Reasons, fmt.Sprintf("broker %d is fenced: it leads nothing and is in no ISR", id))
		return r, nil
	}
	img.eachPartition(func(t *Topic, p *Partition) {
		if !p.HasReplica(id) {
			return
		}
		minISR := MinInsyncReplicas(t, defaultMinISR)
		name := fmt.Sprintf("%s-%d", t.Name, p.ID)
		if len(p.Replicas) <= minISR {
			r.Reasons = append(r.Reasons, fmt.Sprintf(
				"%s has %d replicas and min.insync.replicas %d: acks=all writes stop while broker %d is down",
				name, len(p.Replicas), minISR, id))
			return
		}
		var why string
		switch remaining := len(without(p.ISR, []int{id})); {
		case !p.InISR(id):
			why = fmt.Sprintf("%s: broker %d is not in the ISR %v", name, id, p.ISR)
		case remaining < minISR:
			why = fmt.Sprintf("%s: the ISR would drop to %d, below min.insync.replicas %d", name, remaining, minISR)
		default:
			return
		}
		r.Reasons = append(r.Reasons, why)
		r.Blocking = append(r.Blocking, api.BlockingPartition{Topic: t.Name, Partition: int32(p.ID),
			ISR: int32s(p.ISR), MinInsyncReplicas: minISR})
	})
	r.Safe = len(r.Blocking) == 0
	return r, nil
}

// CheckInvariants returns an error describing the first broken invariant
// of the image, or nil. Tests and snapshot restore use it.
func (img *Image) CheckInvariants() error {
	for _, name := range img.TopicNames() {
		t := img.Topics[name]
		if len(t.Partitions) == 0 {
			return fmt.Errorf("topic %q has no partitions", name)
		}
		for i, p := range t.Partitions {
			if err := img.checkPartition(p, i); err != nil {
				return fmt.Errorf("%s-%d: %w", name, i, err)
			}
		}
	}
	return nil
}

func (img *Image) checkPartition(p *Partition, i int) error {
	switch {
	case p.ID != i:
		return fmt.Errorf("stored at index %d", i)
	case len(p.Replicas) == 0:
		return fmt.Errorf("no replicas")
	case len(p.ISR) == 0:
		return fmt.Errorf("empty ISR")
	case p.Leader != NoLeader && !p.InISR(p.Leader):
		return fmt.Errorf("leader %d not in ISR %v", p.Leader, p.ISR)
	case p.Leader != NoLeader && !img.Live(p.Leader):
		return fmt.Errorf("leader %d is not live", p.Leader)
	case len(intersect(p.Adding, p.Removing)) > 0:
		return fmt.Errorf("adding %v and removing %v overlap", p.Adding, p.Removing)
	}
	for j, r := range p.Replicas {
		if slices.Contains(p.Replicas[:j], r) {
			return fmt.Errorf("replica %d listed twice", r)
		}
		if img.Brokers[r] == nil {
			return fmt.Errorf("replica on unknown broker %d", r)
		}
	}
	for j, r := range p.ISR {
		if !p.HasReplica(r) || slices.Contains(p.ISR[:j], r) {
			return fmt.Errorf("ISR %v not a set within replicas %v", p.ISR, p.Replicas)
		}
	}
	for _, r := range append(slices.Clone(p.Adding), p.Removing...) {
		if !p.HasReplica(r) {
			return fmt.Errorf("reassigned replica %d not in replicas %v", r, p.Replicas)
		}
	}
	return nil
}

// int32s converts broker ids to the width the API gives them.
func int32s(ids []int) []int32 {
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = int32(id)
	}
	return out
}
