package group

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Journal durably stores one state change of a group before it is applied.
// The broker implements it with the internal topic __consumer_offsets, keyed
// by group id. Append returns only once the record is as durable as the
// owner requires (for example acks=all); if it returns an error the change
// is not applied and the error is returned to the caller.
type Journal interface {
	Append(ctx context.Context, group string, record []byte) error
}

// MemoryJournal is a Journal held in memory, for tests and for a broker
// that keeps no group state across restarts.
type MemoryJournal struct {
	mu      sync.Mutex
	records [][]byte
}

// Append stores a copy of record.
func (j *MemoryJournal) Append(ctx context.Context, group string, record []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.records = append(j.records, slices.Clone(record))
	return nil
}

// Records returns copies of every stored record, oldest first.
func (j *MemoryJournal) Records() [][]byte {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([][]byte, len(j.records))
	for i, r := range j.records {
		out[i] = slices.Clone(r)
	}
	return out
}

// write makes one change: it encodes r, appends it to the journal and, only
// if that succeeded, applies it. The caller holds g.mu, so the journal order
// of a group's records is the order they were applied in.
//
// A closed coordinator writes nothing more, and Close cancels an append in
// flight: its outcome is then unknown to the caller, as after any failed
// append, and the next coordinator replays whatever the journal kept.
func (c *Coordinator) write(ctx context.Context, g *group, r *record) error {
	r.V = recordVersion
	r.Group = g.id
	if c.life.Err() != nil {
		return fmt.Errorf("%w: not storing %s record of group %q", ErrCoordinatorNotAvailable, r.Type, g.id)
	}
	ctx, stop := c.bound(ctx)
	defer stop()
	if err := c.journal.Append(ctx, g.id, encodeRecord(r)); err != nil {
		return c.closedError(fmt.Errorf("storing %s record of group %q: %w", r.Type, g.id, err))
	}
	c.apply(g, r)
	return nil
}
