package group

import (
	"context"
	"time"
)

// The initial rebalance delay, as Kafka's group.initial.rebalance.delay.ms.
// Consumers of one application usually start together, a few hundred
// milliseconds apart. Without a delay the first of them forms a generation
// alone, takes every partition and may read and commit before the next
// one joins, and each later joiner starts another rebalance. So when a
// member that assigns (a Kafka consumer, or an HTTP member naming a
// protocol type) joins a group in state Empty, the generation waits the
// delay even though everyone present has joined; each delay in which a
// new member joined is followed by another, until one passes without a
// newcomer or the delays add up to the group's rebalance timeout. Members
// of the HTTP API that let the coordinator assign join at once, as the
// original API did.

// startInitialDelay holds back the rebalance g just began, which a member
// that assigns started from Empty.
func (c *Coordinator) startInitialDelay(g *group, now time.Time) {
	timeout := c.groupRebalanceTimeout(g)
	first := min(c.initialDelay, timeout)
	g.delayUntil = now.Add(first)
	g.delayLeft = timeout - first
	g.newJoiner = false
}

// delaying says the first generation of g is still held back; settle then
// leaves the rebalance to the delay's timer.
func (g *group) delaying() bool { return !g.delayUntil.IsZero() }

// endInitialDelay lets a rebalance complete at once again.
func (g *group) endInitialDelay() {
	g.delayUntil, g.delayLeft, g.newJoiner = time.Time{}, 0, false
}

// armInitialDelay makes sure a timer ends the delay of g.
func (c *Coordinator) armInitialDelay(g *group) {
	if g.timer != nil {
		return
	}
	epoch := g.epoch
	g.timer = time.AfterFunc(g.delayUntil.Sub(c.now()), func() { c.initialDelayPassed(g, epoch) })
}

// initialDelayPassed extends the delay of rebalance epoch of g when a
// member joined during it and the rebalance timeout leaves room, and
// otherwise lets the rebalance complete.
func (c *Coordinator) initialDelayPassed(g *group, epoch uint64) {
	if !c.relock(g) {
		return // closed: the joins fail and their clients find the next coordinator
	}
	defer c.unlockGroup(g)
	if g.removed || g.epoch != epoch || g.state != PreparingRebalance || !g.delaying() {
		return
	}
	g.timer = nil
	if g.newJoiner && g.delayLeft > 0 {
		next := min(c.initialDelay, g.delayLeft)
		g.delayUntil = c.now().Add(next)
		g.delayLeft -= next
		g.newJoiner = false
	} else {
		g.endInitialDelay()
	}
	c.settle(context.Background(), g)
}
