package cluster

import (
	"context"
	"fmt"
	"time"
)

// A metadata change is committed when raft says so, but each broker acts
// on it only once it has applied it, a few milliseconds later — or, for a
// broker stopped or cut off, much later. For most changes that is how
// Kafka works too. A topic deletion is different: a client told the topic
// is gone must not read it again through a broker that has not heard yet.
// So DeleteTopic answers only once every broker has applied the deletion
// (its heartbeats carry the metadata index it has applied) or is fenced:
// a fenced broker, and one stopped without being fenced yet, serves no
// partition until a heartbeat confirms that its metadata includes the
// deletion (the metadata lease, lease.go).

// awaitEveryBroker waits until every registered broker that is not fenced
// has reported a metadata index of at least index. It takes at most one
// heartbeat interval for brokers that are up, and the session timeout for
// one that stopped heartbeating (the controller fences it by then). It
// gives up after twice the session timeout — a controller that cannot
// commit a fence has lost its quorum — and returns ErrRequestTimedOut;
// the change is committed all the same.
func (n *Node) awaitEveryBroker(ctx context.Context, index uint64) error {
	deadline := time.Now().Add(2 * n.cfg.SessionTimeout)
	for {
		ctl, err := n.controller()
		if err != nil {
			return fmt.Errorf("%w: controllership lost while brokers applied metadata index %d", ErrRequestTimedOut, index)
		}
		behind := n.brokersBehind(ctl, index)
		if len(behind) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: brokers %v have not applied metadata index %d", ErrRequestTimedOut, behind, index)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// brokersBehind lists the unfenced brokers that have not reported index
// to ctl; this broker counts by its own image.
func (n *Node) brokersBehind(ctl *controller, index uint64) []int {
	img := n.Image()
	var behind []int
	for _, id := range img.BrokerIDs() {
		b := img.Broker(id)
		switch {
		case b.Fenced:
		case id == n.cfg.BrokerID:
			if img.Index < index {
				behind = append(behind, id)
			}
		case ctl.appliedIndex(id) < index:
			behind = append(behind, id)
		}
	}
	return behind
}

// appliedIndex is the metadata index broker id reported last.
func (c *controller) appliedIndex(id int) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.applied[id]
}
