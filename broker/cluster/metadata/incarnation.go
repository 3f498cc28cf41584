package metadata

import "slices"

// endIncarnation ends what the previous incarnation of broker id held when
// a new one registers before the controller fenced the old one: the broker
// crashed (kill -9) and came back within its session timeout. The old
// process's leaderships and ISR memberships vouch for a log the new one
// may no longer have in full (a torn or unflushed tail is gone after a
// crash), and a leadership that went on in the same epoch would let the
// new process write, at offsets its followers already hold other records
// of that epoch at, records that the epoch-based truncation cannot tell
// apart: replicas would diverge for good.
//
// So, for every partition it leads or is in the ISR of:
//
//   - if another ISR member is one the controller has heard from (heard),
//     the broker leaves the ISR and its leadership moves to that member, in
//     a new epoch: the new incarnation catches up from it like any
//     follower and loses nothing the ISR committed;
//   - otherwise (every other ISR member is silent: the whole cluster
//     restarted, and the controller cannot tell yet who is alive) it keeps
//     its place, since moving the partition to a broker that is down would
//     leave it without a leader once that broker is fenced, but a
//     leadership continues in a new epoch.
//
// Kafka reaches the same end by refusing the new registration until the
// old session expires and removing a broker that shut down uncleanly from
// the ISR (KIP-966); here the registration itself does it, without the
// wait.
func (img *Image) endIncarnation(id int, heard []int) {
	img.eachPartition(func(t *Topic, p *Partition) {
		if p.Leader != id && !p.InISR(id) {
			return
		}
		var takers []int
		for _, r := range p.ISR {
			if r != id && slices.Contains(heard, r) && img.Live(r) {
				takers = append(takers, r)
			}
		}
		q := p.copy()
		if len(takers) == 0 {
			if q.Leader == id {
				img.commitNewLeaderEpoch(t.Name, p, q)
			}
			return
		}
		q.ISR = without(q.ISR, []int{id})
		if q.Leader == id {
			q.Leader = preferredTaker(img, q.Replicas, takers)
		}
		img.commit(t.Name, p, q)
	})
}

// preferredTaker is the first of takers in replica preference order,
// preferring a broker that is not draining.
func preferredTaker(img *Image, replicas, takers []int) int {
	for _, r := range replicas {
		if slices.Contains(takers, r) && !img.Brokers[r].Draining {
			return r
		}
	}
	for _, r := range replicas {
		if slices.Contains(takers, r) {
			return r
		}
	}
	return takers[0]
}

// commitNewLeaderEpoch commits q as the next state of orig in a new
// leader epoch, even though its leader is the same.
func (img *Image) commitNewLeaderEpoch(topic string, orig, q *Partition) {
	q.PartitionEpoch = orig.PartitionEpoch + 1
	q.LeaderEpoch = orig.LeaderEpoch + 1
	img.setPartition(topic, q)
}
