package group

import (
	"sort"
	"sync"
	"time"
)

// State is where a group is in the generation protocol (Kafka's classic
// group states).
type State int8

const (
	// Empty: no protocol member; offsets and simple members may remain.
	Empty State = iota
	// PreparingRebalance: waiting for every protocol member to rejoin.
	PreparingRebalance
	// CompletingRebalance: a generation and its assignment exist, and some
	// of its members have not fetched their assignment yet.
	CompletingRebalance
	// Stable: every member of the generation has its assignment.
	Stable
	// Dead: the coordinator was closed; the group answers nothing.
	Dead
)

var stateNames = [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}

func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "Unknown"
}

// TopicPartition names one partition of one topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// committed is a committed offset and its client metadata.
type committed struct {
	offset   int64
	metadata string
}

// group is one consumer group. Fields marked persisted are rebuilt exactly
// by Replay; the rest exist only while this coordinator runs.
type group struct {
	mu      sync.Mutex
	id      string
	removed bool // dropped from the coordinator's map: look it up again

	// persisted
	members    map[string]*member
	generation int32
	leader     string
	config     *GroupConfig
	saved      map[string][]Assignment // simple API: topic -> assignment
	offsets    map[TopicPartition]committed
	// rebalancePending says that a journaled change (a protocol member left,
	// the strategy changed) requires a new generation, so that a coordinator
	// that replays the journal resumes the rebalance.
	rebalancePending  bool
	rebalanceDeadline time.Time // persisted while rebalancePending
	// protocolType is the protocol type of a group whose members assign
	// ("" while the coordinator assigns), protocol the protocol its
	// current generation chose, and assigned says the leader's assignment
	// of that generation is stored.
	protocolType string
	protocol     string
	assigned     bool

	// runtime
	state  State
	epoch  uint64      // counts rebalances, so a stale timer does nothing
	timer  *time.Timer // completes the rebalance at its deadline
	joins  map[string]*pendingJoin
	synced map[string]bool // members that fetched this generation's assignment
	// syncs are the SyncGroups of members that assign, waiting for the
	// leader's assignment.
	syncs map[string]*pendingSync
	// delayUntil, while set, holds back the first generation of a group
	// that members who assign join from Empty (initialdelay.go); delayLeft
	// is how much longer later joiners may extend it, and newJoiner says
	// a member joined since it was last extended.
	delayUntil time.Time
	delayLeft  time.Duration
	newJoiner  bool
}

func newGroup(id string) *group {
	return &group{
		id:      id,
		members: map[string]*member{},
		saved:   map[string][]Assignment{},
		offsets: map[TopicPartition]committed{},
		joins:   map[string]*pendingJoin{},
		synced:  map[string]bool{},
		syncs:   map[string]*pendingSync{},
	}
}

// isEmpty says the group holds nothing worth keeping, so it can be dropped
// from the coordinator (a later request starts it afresh at generation 0, as
// Kafka does with an empty group without offsets).
func (g *group) isEmpty() bool {
	return len(g.members) == 0 && len(g.offsets) == 0 && len(g.saved) == 0 &&
		g.config == nil && len(g.joins) == 0 && len(g.syncs) == 0 && g.state != PreparingRebalance
}

// sortedMemberIDs returns the ids of every member, sorted.
func (g *group) sortedMemberIDs() []string {
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// inBarrier says that m must rejoin before a rebalance completes.
func (m *member) inBarrier() bool { return m.protocol || m.transient }

// allJoined says every member of the barrier has a pending join.
func (g *group) allJoined() bool {
	for id, m := range g.members {
		if m.inBarrier() && g.joins[id] == nil {
			return false
		}
	}
	return true
}

// hasProtocolMembers says a generation has members.
func (g *group) hasProtocolMembers() bool {
	for _, m := range g.members {
		if m.protocol {
			return true
		}
	}
	return false
}

// reportedState is the state Describe and ListGroups show: a group with
// only simple members is in use, so it is Stable rather than Empty.
func (g *group) reportedState() State {
	if g.state == Empty && len(g.members) > 0 {
		return Stable
	}
	return g.state
}

func (g *group) stopTimer() {
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
}

// strategy is the group's assignment strategy.
func (g *group) strategy() string {
	if g.config != nil && g.config.AssignmentStrategy != "" {
		return g.config.AssignmentStrategy
	}
	return StrategyRange
}
