package group

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Config.
const (
	DefaultSessionTimeout   = 5 * time.Minute // the original broker's stale-member timeout
	DefaultRebalanceTimeout = time.Minute
	DefaultCleanupInterval  = time.Minute
)

// Config configures a Coordinator.
type Config struct {
	// Journal stores every change before it is applied. Required.
	Journal Journal
	// Partitions answers partition counts and offsets. Required.
	Partitions Partitions
	// Now is the clock; time.Now when nil. Times are kept to the
	// millisecond, as the journal stores them.
	Now func() time.Time
	// SessionTimeout is how long a member may go unseen before the cleanup
	// pass removes it, for groups and members that set none
	// (group.stale.timeout.ms). DefaultSessionTimeout when zero.
	SessionTimeout time.Duration
	// RebalanceTimeout is how long a rebalance waits for members that
	// joined without a rebalance timeout. DefaultRebalanceTimeout when zero.
	RebalanceTimeout time.Duration
	// CleanupInterval is the period of RunCleanup
	// (group.cleanup.interval.ms). DefaultCleanupInterval when zero.
	CleanupInterval time.Duration
	// InitialRebalanceDelay holds back the first generation of a group
	// that members who assign join from Empty, so that consumers starting
	// together form one generation (group.initial.rebalance.delay.ms,
	// initialdelay.go). Zero: no delay.
	InitialRebalanceDelay time.Duration
}

// Coordinator coordinates the consumer groups whose journal partition this
// broker leads. Build one with New, Replay the partition's records, then
// serve; Close it when leadership moves away.
type Coordinator struct {
	journal          Journal
	partitions       Partitions
	clock            func() time.Time
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	cleanupInterval  time.Duration
	initialDelay     time.Duration

	// life ends when Close is called. Journal appends and reads of other
	// brokers' partitions run under it as well as under their request's
	// context, so that nothing a closed coordinator started keeps waiting.
	life    context.Context
	endLife context.CancelFunc

	mu     sync.Mutex // guards closed, groups and busy; never held while taking a group's mu
	closed bool
	groups map[string]*group
	// loadedMs is when Loaded was called (Unix ms), 0 before.
	loadedMs atomic.Int64
	// busy counts the operations that hold or wait for a group's mutex;
	// drained is closed once the coordinator is closed and busy is zero.
	busy    int
	drained chan struct{}

	// onUnlock, set by tests, runs at the end of every group operation
	// while the group's mutex is still held.
	onUnlock func(*group)
}

// New returns a coordinator with no groups.
func New(cfg Config) (*Coordinator, error) {
	if cfg.Journal == nil || cfg.Partitions == nil {
		return nil, errors.New("group: Config.Journal and Config.Partitions are required")
	}
	for _, d := range []time.Duration{cfg.SessionTimeout, cfg.RebalanceTimeout, cfg.CleanupInterval, cfg.InitialRebalanceDelay} {
		if d < 0 {
			return nil, fmt.Errorf("group: negative duration %s in Config", d)
		}
	}
	c := &Coordinator{
		journal:          cfg.Journal,
		partitions:       cfg.Partitions,
		clock:            cfg.Now,
		sessionTimeout:   cfg.SessionTimeout,
		rebalanceTimeout: cfg.RebalanceTimeout,
		cleanupInterval:  cfg.CleanupInterval,
		initialDelay:     cfg.InitialRebalanceDelay,
		groups:           map[string]*group{},
		drained:          make(chan struct{}),
	}
	c.life, c.endLife = context.WithCancel(context.Background())
	if c.clock == nil {
		c.clock = time.Now
	}
	if c.sessionTimeout == 0 {
		c.sessionTimeout = DefaultSessionTimeout
	}
	if c.rebalanceTimeout == 0 {
		c.rebalanceTimeout = DefaultRebalanceTimeout
	}
	if c.cleanupInterval == 0 {
		c.cleanupInterval = DefaultCleanupInterval
	}
	return c, nil
}

// now reads the clock to the millisecond, the journal's precision, so that
// live and replayed state hold equal times.
func (c *Coordinator) now() time.Time { return fromMs(toMs(c.clock())) }

// lockGroup returns the group locked; with create it makes a missing group,
// otherwise it returns nil for one. Every group it returns is released
// with unlockGroup.
func (c *Coordinator) lockGroup(id string, create bool) (*group, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrCoordinatorNotAvailable
		}
		g := c.groups[id]
		if g == nil {
			if !create {
				c.mu.Unlock()
				return nil, nil
			}
			g = newGroup(id)
			c.groups[id] = g
		}
		c.busy++
		c.mu.Unlock()
		g.mu.Lock()
		if !g.removed {
			return g, nil
		}
		g.mu.Unlock() // dropped while we waited: look again
		c.release()
	}
}

// relock locks a group an operation held before and let go of (a join
// waiting for the barrier, a rebalance timer). It reports false, without
// locking, once the coordinator is closed; the caller checks g.removed.
func (c *Coordinator) relock(g *group) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	c.busy++
	c.mu.Unlock()
	g.mu.Lock()
	return true
}

// unlockGroup ends an operation on g, dropping g if nothing is left in it.
// The last operation on a group of a closed coordinator answers the joins
// still waiting and stops its timer.
func (c *Coordinator) unlockGroup(g *group) {
	if c.onUnlock != nil {
		c.onUnlock(g)
	}
	if c.life.Err() != nil {
		c.failAllJoins(g, ErrCoordinatorNotAvailable)
		g.failSyncs(ErrCoordinatorNotAvailable)
		g.stopTimer()
		g.state = Dead
	} else if !g.removed && g.isEmpty() {
		c.mu.Lock()
		if c.groups[g.id] == g {
			delete(c.groups, g.id)
		}
		c.mu.Unlock()
		g.removed = true
		g.stopTimer()
	}
	g.mu.Unlock()
	c.release()
}

// release ends an operation counted by lockGroup or relock.
func (c *Coordinator) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy--
	if c.closed && c.busy == 0 {
		close(c.drained)
	}
}

// bound returns a context that also ends when the coordinator closes.
func (c *Coordinator) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.life, cancel)
	return ctx, func() { stop(); cancel() }
}

// closedError turns the failure of a call that Close cut short into
// ErrCoordinatorNotAvailable, which tells the client to find the new
// coordinator.
func (c *Coordinator) closedError(err error) error {
	if err != nil && c.life.Err() != nil && !errors.Is(err, ErrCoordinatorNotAvailable) {
		return fmt.Errorf("%w: the coordinator closed: %v", ErrCoordinatorNotAvailable, err)
	}
	return err
}

// groupIDs returns the ids of the known groups, sorted.
func (c *Coordinator) groupIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]string, 0, len(c.groups))
	for id := range c.groups {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Replay applies one stored record, oldest first, to rebuild state at
// start-up or when this broker becomes the coordinator of the records'
// partition. Replaying the same records always gives the same state; a
// record of a type this version does not know is skipped. It returns an
// error wrapping ErrInvalidRecord for bytes that are not a record, and
// changes nothing then. Replay starts no timers: a group left waiting for a
// rebalance completes when its members rejoin or when CleanupOnce finds its
// deadline passed. Call Loaded after the last record.
func (c *Coordinator) Replay(record []byte) error {
	r, err := decodeRecord(record)
	if err != nil {
		return err
	}
	g, err := c.lockGroup(r.Group, true)
	if err != nil {
		return err
	}
	defer c.unlockGroup(g)
	c.apply(g, r)
	return nil
}

// Loaded ends the load: call it once the journal is replayed, before
// serving. Every replayed member gets a full session from now before the
// cleanup pass may expire it, and a replayed rebalance a full rebalance
// timeout from now, as Kafka schedules every member's heartbeat expiry
// when it loads a group. The journal holds when a member was last seen by
// the previous coordinator, to within a third of its session (touch), but
// nothing of the time since: while the coordinator moved (the old one's
// broker fenced, a new leader elected, the journal replayed) no member
// could reach one, and a deadline taken from the journal alone would
// expire members that are alive and on their way.
func (c *Coordinator) Loaded() {
	now := c.now()
	c.loadedMs.Store(toMs(now))
	for _, id := range c.groupIDs() {
		g, err := c.lockGroup(id, false)
		if err != nil || g == nil {
			continue
		}
		if g.state == PreparingRebalance {
			if d := now.Add(c.groupRebalanceTimeout(g)); g.rebalanceDeadline.Before(d) {
				g.rebalanceDeadline = d
			}
		}
		c.unlockGroup(g)
	}
}

// loadedAt is when Loaded was called; the zero time before.
func (c *Coordinator) loadedAt() time.Time {
	if ms := c.loadedMs.Load(); ms != 0 {
		return fromMs(ms)
	}
	return time.Time{}
}

// Close stops the coordinator, for when this broker no longer leads the
// journal partition: waiting joins return ErrCoordinatorNotAvailable, as does
// every later call, and the journal appends and remote reads in flight are
// cancelled. State is not journaled; the new coordinator replays it.
//
// Close takes no group's lock, so it returns at once whatever an operation
// is waiting for: the broker calls it from the goroutine that applies
// metadata, which must not wait on a slow journal append or another
// broker. Drained says when the operations that were running have ended.
func (c *Coordinator) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	c.endLife()
	if c.busy == 0 {
		close(c.drained)
	}
}

// Drained is closed once Close has been called and no operation of the
// coordinator holds a group any more, so none can append to the journal:
// a coordinator that replays the same partition waits for it first.
func (c *Coordinator) Drained() <-chan struct{} { return c.drained }
