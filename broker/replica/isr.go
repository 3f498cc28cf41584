package replica

import (
	"slices"
	"time"
)

// isrProposal is an AlterISR the leader has sent and not yet seen answered.
// At most one is in flight per partition.
type isrProposal struct {
	req AlterISRRequest
}

// proposalBackoff spaces out proposals after the controller refused one or
// could not be reached, so a follower fetching in a loop does not turn into
// a stream of AlterISR requests.
const proposalBackoff = 500 * time.Millisecond

// maximalISRLocked is the ISR the high watermark must respect: the committed
// ISR plus any member being added. A member being removed still counts until
// the controller commits its removal (the old ISR may still elect a leader);
// a member being added counts at once (it has everything below the HW, and
// counting it can only hold the HW back). This is Kafka's "maximal ISR".
func (p *partition) maximalISRLocked() []int32 {
	isr := p.state.ISR
	if p.pending == nil {
		return isr
	}
	out := slices.Clone(isr)
	for _, id := range p.pending.req.ISR {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// maybeExpandISRLocked proposes adding a follower that has caught up: its log
// reaches the high watermark and the start of this leadership's epoch (so it
// holds everything this leader had when it was elected, even what is not yet
// committed — Kafka KAFKA-7128).
func (p *partition) maybeExpandISRLocked(id int32, fp *followerProgress) {
	if p.pending != nil || slices.Contains(p.state.ISR, id) || !slices.Contains(p.state.Replicas, id) {
		return
	}
	if fp.leo < p.hw || fp.leo < p.epochStartOffset || p.env.now().Before(p.nextProposal) {
		return
	}
	isr := append(slices.Clone(p.state.ISR), id)
	p.proposeLocked(isr)
}

// maybeShrinkISR proposes removing followers that have not been caught up
// for replica.lag.time.max.ms. A follower that keeps long-polling an idle
// leader stays caught up (each fetch at the log end refreshes it); one that
// stops fetching leaves the ISR after the lag time even if no new record
// arrives, so acks=all producers wait at most that long for a dead broker.
func (p *partition) maybeShrinkISR() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.env.now()
	if p.closed || p.role != roleLeader || p.pending != nil || now.Before(p.nextProposal) {
		return
	}
	var isr []int32
	for _, id := range p.state.ISR {
		if id != p.env.brokerID {
			fp, ok := p.followers[id]
			if !ok || now.Sub(fp.lastCaughtUp) > p.env.lagMax {
				continue
			}
		}
		isr = append(isr, id)
	}
	if len(isr) == len(p.state.ISR) {
		return
	}
	p.proposeLocked(isr)
}

func (p *partition) proposeLocked(isr []int32) {
	prop := &isrProposal{
		req: AlterISRRequest{
			Topic: p.topic, Partition: p.id, LeaderID: p.env.brokerID,
			LeaderEpoch: p.state.LeaderEpoch, PartitionEpoch: p.state.PartitionEpoch,
			ISR: isr,
		},
	}
	p.pending = prop
	p.env.logger.Info("Proposing ISR change", "topic", p.topic, "partition", p.id,
		"from", p.state.ISR, "to", isr, "epoch", p.state.LeaderEpoch)
	p.env.proposeISR(p, prop)
}

// completeProposal applies the controller's answer to prop. The committed
// state is trusted only if it still belongs to this leadership and is newer
// than what the metadata has already delivered.
func (p *partition) completeProposal(prop *isrProposal, st PartitionState, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending != prop {
		return // superseded by a metadata update or a new leadership
	}
	if err != nil {
		p.pending = nil
		p.nextProposal = p.env.now().Add(proposalBackoff)
		p.env.logger.Warn("ISR change refused", "topic", p.topic, "partition", p.id,
			"isr", prop.req.ISR, "error", err)
		return
	}
	if p.role != roleLeader || st.LeaderEpoch != p.state.LeaderEpoch || st.PartitionEpoch <= p.state.PartitionEpoch {
		// Committed, but the answer does not carry the new state: keep
		// the proposal pending until the metadata delivers the newer
		// partition epoch (updateState clears it then).
		return
	}
	p.pending = nil
	p.setISRLocked(st.ISR, st.PartitionEpoch)
}

// setISRLocked installs a committed ISR, counts the change for the metrics
// and lets the high watermark move on if a member left.
func (p *partition) setISRLocked(isr []int32, partitionEpoch int32) {
	old := p.state.ISR
	p.state.ISR = slices.Clone(isr)
	p.state.PartitionEpoch = partitionEpoch
	if p.role != roleLeader {
		return
	}
	for _, id := range isr {
		if !slices.Contains(old, id) {
			p.stats.isrExpands.Add(1)
			break
		}
	}
	for _, id := range old {
		if !slices.Contains(isr, id) {
			p.stats.isrShrinks.Add(1)
			break
		}
	}
	p.maybeAdvanceHWLocked()
}
