package group

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// CleanupOnce runs one pass of the background stale-member cleanup at now,
// over every group:
//
//   - a rebalance whose members have all rejoined, or whose deadline has
//     passed, is completed (this is how a rebalance inherited from the
//     journal ends when nobody rejoins);
//   - members not seen for their session timeout (the group's, else the
//     member's own from JoinGroup, else Config.SessionTimeout) are removed;
//     a protocol member's removal starts a rebalance; the session of a
//     member replayed from the journal runs from the load (Loaded) at the
//     earliest;
//   - if members were removed, the group's saved assignments are deleted
//     when no member is left, and otherwise recomputed over the remaining
//     members for every saved topic that still exists (a topic that does not
//     exist now is skipped, its saved assignment kept).
//
// An error in one group does not stop the others; all are returned joined.
func (c *Coordinator) CleanupOnce(ctx context.Context, now time.Time) error {
	now = fromMs(toMs(now))
	var errs []error
	for _, id := range c.groupIDs() {
		if err := c.cleanupGroup(ctx, id, now); err != nil {
			errs = append(errs, fmt.Errorf("cleaning up group %q: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

func (c *Coordinator) cleanupGroup(ctx context.Context, id string, now time.Time) error {
	g, err := c.lockGroup(id, false)
	if err != nil || g == nil {
		return err
	}
	defer c.unlockGroup(g)
	if g.state == PreparingRebalance && ((g.allJoined() && !g.delaying()) || !now.Before(g.rebalanceDeadline)) {
		c.completeRebalance(ctx, g, now)
	}
	removed, err := c.removeStale(ctx, g, now, c.loadedAt(), func(m *member) time.Duration { return c.memberSessionTimeout(g, m) })
	if err != nil || len(removed) == 0 {
		return err
	}
	return c.rebalanceSaved(ctx, g, now)
}

// RunCleanup runs CleanupOnce every Config.CleanupInterval until ctx ends,
// passing errors to onError (which may be nil) and carrying on, as the
// original broker's loop does. The broker may instead run its own ticker.
func (c *Coordinator) RunCleanup(ctx context.Context, onError func(error)) {
	t := time.NewTicker(c.cleanupInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := c.CleanupOnce(ctx, c.now()); err != nil && onError != nil && ctx.Err() == nil {
				onError(err)
			}
		}
	}
}
