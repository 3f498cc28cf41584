package replica

import (
	"context"
	"errors"
	"time"
)

// errStaleFetcher: the leadership a fetcher was started for has ended; the
// fetcher exits and the manager has already started the next one.
var errStaleFetcher = errors.New("fetcher's leadership has ended")

// fetchBackoff is the pause after a failed fetch before the next attempt.
const fetchBackoff = 100 * time.Millisecond

// fetcher is a follower's fetch loop for one partition and one leadership
// (leader id, leader epoch). A new leadership gets a new fetcher; the old one
// is stopped, and even before it stops, every write it attempts checks the
// leadership under the partition's role lock, so it cannot touch the log.
//
// One goroutine per partition rather than one per source broker: each
// leadership's protocol state (truncation done or not, fetch offset, epoch)
// is then a local variable, the long poll wakes on exactly one partition's
// appends, and a slow or failing partition never holds back another. The
// cost is one long-polling HTTP request (on a kept-alive connection) per
// followed partition, which is fine at the hundreds of partitions per broker
// KairoLog targets; batching partitions per leader into one request is the
// step to take beyond that.
type fetcher struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// stop ends the loop and waits for it to return.
func (f *fetcher) stop() {
	f.cancel()
	<-f.done
}

// startFetcher launches a fetcher for p following leader in epoch.
func (m *Manager) startFetcher(p *partition, leader, epoch int32) *fetcher {
	ctx, cancel := context.WithCancel(m.ctx)
	f := &fetcher{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		m.runFetcher(ctx, p, leader, epoch)
	}()
	return f
}

// runFetcher is the follower protocol for one leadership:
//
//  1. Ask the leader where this replica's latest epoch ends in the leader's
//     log (OffsetsForLeaderEpoch) and truncate there: whatever this replica
//     wrote beyond it, as a deposed leader, never reached the leader and is
//     discarded.
//  2. Fetch from the log end offset, long-polling; append the raw batches
//     and take the leader's high watermark.
//  3. If the leader says the offset is below its log start (retention went
//     past this replica), restart the log there; if it is above its log end,
//     truncate to it.
func (m *Manager) runFetcher(ctx context.Context, p *partition, leader, epoch int32) {
	log := m.logger.With("topic", p.topic, "partition", p.id, "leader", leader, "epoch", epoch)
	truncated := false
	var lastErr string
	fail := func(err error, msg string) bool {
		if errors.Is(err, errStaleFetcher) || ctx.Err() != nil {
			return false
		}
		// Log a failure once, not on every retry. A leader that has moved
		// on (this broker's metadata is a moment behind) is expected
		// around every election: the next image restarts the fetcher.
		if s := err.Error(); s != lastErr {
			var nl *NotLeaderError
			if errors.As(err, &nl) || errors.Is(err, ErrFencedLeaderEpoch) || errors.Is(err, ErrInconsistentTopicID) {
				log.Info(msg, "error", err)
			} else {
				log.Warn(msg, "error", err)
			}
			lastErr = s
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(fetchBackoff):
			return true
		}
	}
	for ctx.Err() == nil {
		addr, ok := m.cfg.Metadata.BrokerAddress(leader)
		if !ok {
			if !fail(errors.New("leader address unknown"), "Cannot fetch") {
				return
			}
			continue
		}
		if !truncated {
			if err := m.truncateToLeader(ctx, p, addr, leader, epoch); err != nil {
				if !fail(err, "Epoch end offset request failed") {
					return
				}
				continue
			}
			truncated = true
		}
		offset := p.log.LogEndOffset()
		res, err := m.client.fetch(ctx, addr, fetchRequest{
			Topic: p.topic, TopicID: p.TopicID(), Partition: p.id, ReplicaID: m.cfg.BrokerID,
			LeaderEpoch: epoch, FetchOffset: offset,
			MaxBytes: m.cfg.FetchMaxBytes, WaitMs: m.cfg.FetchWait.Milliseconds(),
		})
		var oor *OffsetOutOfRangeError
		switch {
		case err == nil:
			err = p.appendAsFollower(leader, epoch, res.Batches, res.HighWatermark, res.LogStartOffset)
			if err != nil {
				// Re-establish where the logs agree before trying again.
				truncated = false
				if !fail(err, "Appending fetched batches failed") {
					return
				}
				continue
			}
			lastErr = ""
		case errors.As(err, &oor):
			if offset < oor.LogStartOffset {
				err = p.restartAt(leader, epoch, oor.LogStartOffset)
			} else if offset > oor.LogEndOffset {
				err = p.truncateTo(leader, epoch, oor.LogEndOffset)
			}
			if err != nil && !fail(err, "Resetting follower log failed") {
				return
			}
		default:
			// Not leader, fenced or unknown epoch, network: the metadata
			// will tell us about the new leadership; until then retry.
			if !fail(err, "Fetch from leader failed") {
				return
			}
		}
	}
}

// truncateToLeader is step 1 of runFetcher.
func (m *Manager) truncateToLeader(ctx context.Context, p *partition, addr string, leader, epoch int32) error {
	latest := p.log.LatestEpoch()
	if latest < 0 {
		return nil // nothing written in any epoch: nothing to disagree on
	}
	leaderEpoch, end, err := m.client.epochEnd(ctx, addr, epochEndRequest{
		Topic: p.topic, TopicID: p.TopicID(), Partition: p.id, ReplicaID: m.cfg.BrokerID,
		LeaderEpoch: epoch, Epoch: latest,
	})
	if err != nil {
		return err
	}
	var target int64
	switch {
	case leaderEpoch < 0:
		// The leader knows no epoch up to ours (its log starts later):
		// keep only what was committed.
		target = p.HighWatermark()
	case leaderEpoch < latest:
		// The leader never saw our latest epoch; our logs agree up to the
		// end of the last epoch both have.
		_, own := p.log.EndOffsetForEpoch(leaderEpoch)
		target = min(end, own)
	default:
		target = end
	}
	return p.truncateTo(leader, epoch, target)
}
