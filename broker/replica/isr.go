package replica

import (
	"errors"
	"slices"
	"time"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
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
			if !ok {
				continue
			}
			fp.catchUpLocked()
			if now.Sub(fp.lastCaughtUp) > p.env.lagMax {
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

// completeProposal applies the controller's answer to prop and reports
// whether to send prop again. The committed state is trusted only if it
// still belongs to this leadership and is newer than what the metadata has
// already delivered.
//
// Until the answer is definite the proposal stays pending, so the maximal
// ISR keeps a member being added (Kafka's PendingExpandIsr): a change the
// controller may have committed must hold the high watermark back as if
// it had, or the HW could pass records that member lacks while the
// committed ISR already names it, and a leader elected from that ISR would
// lose them. Without an answer (a timeout, a lost connection, no
// controller) the same proposal is sent again, as Kafka's AlterPartition
// manager does; an answer that this leader's view is stale keeps it
// pending until the metadata brings the partition's current state
// (updateState, or a new leadership, clears it); only a refusal that says
// the change was not made with the current state (an invalid ISR) drops it.
func (p *partition) completeProposal(prop *isrProposal, st PartitionState, err error) (retry bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending != prop || p.closed || p.role != roleLeader {
		return false // superseded by a metadata update or a new leadership
	}
	if err != nil {
		switch classifyISRAnswer(err) {
		case isrRefused:
			p.pending = nil
			p.nextProposal = p.env.now().Add(proposalBackoff)
			p.env.logger.Warn("ISR change refused", "topic", p.topic, "partition", p.id,
				"isr", prop.req.ISR, "error", err)
			return false
		case isrStale:
			p.env.logger.Info("ISR change refused for a stale view; waiting for the metadata", "topic", p.topic,
				"partition", p.id, "isr", prop.req.ISR, "error", err)
			return false
		default:
			p.env.logger.Warn("ISR change unanswered; keeping it pending and sending it again", "topic", p.topic,
				"partition", p.id, "isr", prop.req.ISR, "error", err)
			return true
		}
	}
	if st.LeaderEpoch != p.state.LeaderEpoch || st.PartitionEpoch <= p.state.PartitionEpoch {
		// Committed, but the answer does not carry the new state: keep
		// the proposal pending until the metadata delivers the newer
		// partition epoch (updateState clears it then).
		return false
	}
	p.pending = nil
	p.setISRLocked(st.ISR, st.PartitionEpoch)
	return false
}

// isrAnswer is what an AlterISR error says about the proposal.
type isrAnswer int

const (
	// isrUnknown: no answer came; the change may or may not be committed.
	isrUnknown isrAnswer = iota
	// isrStale: refused because the leader's view (leader or partition
	// epoch, the partition itself) is behind the controller's; the
	// metadata will bring the current state.
	isrStale
	// isrRefused: refused against the current state; nothing changed.
	isrRefused
)

// classifyISRAnswer sorts an AlterISR error. Only the controller's own
// refusals are definite; anything else may hide a committed change.
func classifyISRAnswer(err error) isrAnswer {
	switch {
	case errors.Is(err, metadata.ErrInvalidISR):
		return isrRefused
	case errors.Is(err, metadata.ErrFencedLeaderEpoch), errors.Is(err, metadata.ErrStalePartitionEpoch),
		errors.Is(err, metadata.ErrNotLeader), errors.Is(err, metadata.ErrUnknownTopic),
		errors.Is(err, metadata.ErrUnknownPartition),
		errors.Is(err, ErrFencedLeaderEpoch), errors.Is(err, ErrUnknownPartition):
		return isrStale
	}
	return isrUnknown
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
	// A follower that left the ISR is looked at on each of its fetches
	// again, until it is back (sessions.go).
	p.notifySessionsLocked()
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
