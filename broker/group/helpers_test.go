package group

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// noon is 12:00 of the original broker's stale-member examples.
var noon = time.Date(2026, 4, 30, 12, 0, 0, 0, time.UTC)

// at returns a time on the examples' day.
func at(hour, minute int) time.Time { return time.Date(2026, 4, 30, hour, minute, 0, 0, time.UTC) }

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fakePartition is one partition of fakeTopics: offsets [start, leo), the
// high watermark, and record timestamps (Unix ms) of offsets from start.
type fakePartition struct {
	start, hw, leo int64
	times          []int64
}

// fakeTopics is the broker's partitions as a test sets them.
type fakeTopics struct {
	mu     sync.Mutex
	topics map[string][]fakePartition
}

func newFakeTopics() *fakeTopics { return &fakeTopics{topics: map[string][]fakePartition{}} }

// add creates a topic of n empty partitions.
func (f *fakeTopics) add(topic string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.topics[topic] = make([]fakePartition, n)
}

func (f *fakeTopics) remove(topic string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.topics, topic)
}

// set sets one partition's offsets.
func (f *fakeTopics) set(topic string, p int, start, hw, leo int64, times ...int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.topics[topic][p] = fakePartition{start: start, hw: hw, leo: leo, times: times}
}

func (f *fakeTopics) PartitionCount(topic string) (int32, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ps, ok := f.topics[topic]
	return int32(len(ps)), ok
}

func (f *fakeTopics) part(topic string, p int32) (fakePartition, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ps, ok := f.topics[topic]
	if !ok {
		return fakePartition{}, fmt.Errorf("%w: %s", ErrUnknownTopic, topic)
	}
	if p < 0 || int(p) >= len(ps) {
		return fakePartition{}, fmt.Errorf("%w: %s/%d", ErrUnknownPartition, topic, p)
	}
	return ps[p], nil
}

func (f *fakeTopics) Bounds(ctx context.Context, topic string, p int32) (Bounds, error) {
	fp, err := f.part(topic, p)
	return Bounds{LogStartOffset: fp.start, HighWatermark: fp.hw, LogEndOffset: fp.leo}, err
}

func (f *fakeTopics) OffsetForTimestamp(ctx context.Context, topic string, p int32, ts int64) (int64, error) {
	fp, err := f.part(topic, p)
	if err != nil {
		return 0, err
	}
	for i, t := range fp.times {
		if t >= ts && fp.start+int64(i) < fp.hw {
			return fp.start + int64(i), nil
		}
	}
	return fp.hw, nil
}

// flakyJournal is a MemoryJournal that fails while fail is set.
type flakyJournal struct {
	MemoryJournal
	fail atomic.Bool
}

var errJournalDown = errors.New("journal partition unavailable")

func (j *flakyJournal) Append(ctx context.Context, group string, record []byte) error {
	if j.fail.Load() {
		return errJournalDown
	}
	return j.MemoryJournal.Append(ctx, group, record)
}

// env is a coordinator with its journal, clock and topics.
type env struct {
	t       testing.TB
	c       *Coordinator
	journal *flakyJournal
	clock   *fakeClock
	topics  *fakeTopics
	cfg     Config
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{t: t, journal: &flakyJournal{}, clock: &fakeClock{t: noon}, topics: newFakeTopics()}
	e.topics.add("orders", 4)
	e.cfg = Config{Journal: e.journal, Partitions: e.topics, Now: e.clock.Now, RebalanceTimeout: 10 * time.Second}
	e.c = e.newCoordinator()
	t.Cleanup(e.c.Close)
	return e
}

func (e *env) newCoordinator() *Coordinator {
	e.t.Helper()
	c, err := New(e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// restart builds a new coordinator on the same journal and replays it.
func (e *env) restart() *Coordinator {
	e.t.Helper()
	c := e.newCoordinator()
	for _, r := range e.journal.Records() {
		if err := c.Replay(r); err != nil {
			e.t.Fatalf("replay %s: %v", r, err)
		}
	}
	c.Loaded()
	e.t.Cleanup(c.Close)
	return c
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t testing.TB, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error = %v, want %v", err, want)
	}
}

var bg = context.Background()

// ids returns the ids of members.
// members lists a group's members as DescribeMembers shows them, and
// when each was last seen; none for an unknown group.
func members(c *Coordinator, g string) ([]Member, error) {
	d, err := c.DescribeMembers(g)
	if errors.Is(err, ErrUnknownGroup) {
		return []Member{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []Member{}
	for _, m := range d.Members {
		out = append(out, Member{ID: m.ID, LastSeen: m.LastSeen})
	}
	return out, nil
}

// groupsWithMembers lists, sorted, the groups that have members.
func groupsWithMembers(c *Coordinator) []string {
	out := []string{}
	for _, s := range c.ListGroups() {
		if s.Members > 0 {
			out = append(out, s.Group)
		}
	}
	return out
}

func ids(ms []Member) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// tps builds a one-topic assignment list.
func tps(topic string, ps ...int32) []TopicPartitions {
	if len(ps) == 0 {
		return []TopicPartitions{}
	}
	return []TopicPartitions{{Topic: topic, Partitions: ps}}
}

// asg builds one member's assignment of one topic.
func asg(member, topic string, ps ...int32) Assignment {
	return Assignment{MemberID: member, Topics: tps(topic, ps...)}
}

// memberView is a member's persisted state.
type memberView struct {
	ID, ClientID       string
	Protocol           bool
	Topics             []string
	Session, Rebalance time.Duration
	LastSeen           time.Time
	Assignment         []TopicPartitions
	ProtocolType       string
	Protocols          []Protocol
	MemberAssignment   []byte
}

// groupView is a group's persisted state, for comparing coordinators.
type groupView struct {
	Members    []memberView
	Generation int32
	Leader     string
	Config     *GroupConfig
	Saved      map[string][]Assignment
	Offsets    map[TopicPartition]committed
	Pending    bool
	State      State
	// Members that assign: the protocol type, the chosen protocol and
	// whether the leader's assignment is in.
	ProtocolType, Protocol string
	Assigned               bool
}

// view returns the persisted state of every group. CompletingRebalance and
// Stable are one state to a replaying coordinator.
func view(c *Coordinator) map[string]groupView {
	out := map[string]groupView{}
	for _, id := range c.groupIDs() {
		g, err := c.lockGroup(id, false)
		if err != nil || g == nil {
			continue
		}
		v := groupView{Generation: g.generation, Leader: g.leader, Saved: map[string][]Assignment{},
			Offsets: map[TopicPartition]committed{}, Pending: g.rebalancePending, State: g.state,
			ProtocolType: g.protocolType, Protocol: g.protocol, Assigned: g.assigned}
		if v.State == CompletingRebalance {
			v.State = Stable
		}
		if g.config != nil {
			cfg := *g.config
			v.Config = &cfg
		}
		for _, mid := range g.sortedMemberIDs() {
			m := g.members[mid]
			if m.transient {
				continue
			}
			v.Members = append(v.Members, memberView{ID: m.id, ClientID: m.clientID, Protocol: m.protocol,
				Topics: slices.Clone(m.topics), Session: m.sessionTimeout, Rebalance: m.rebalanceTimeout,
				LastSeen: m.lastSeen, Assignment: cloneTopicPartitions(m.assignment),
				ProtocolType: m.protocolType, Protocols: m.protocols, MemberAssignment: m.memberAssignment})
		}
		for t, a := range g.saved {
			v.Saved[t] = cloneAssignments(a)
		}
		for tp, co := range g.offsets {
			v.Offsets[tp] = co
		}
		c.unlockGroup(g)
		out[id] = v
	}
	return out
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
