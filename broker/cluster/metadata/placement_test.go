package metadata

import (
	"errors"
	"slices"
	"testing"
)

func racksOf(img *Image, a []int) map[string]bool {
	racks := map[string]bool{}
	for _, r := range a {
		racks[img.Brokers[r].Rack] = true
	}
	return racks
}

func TestPlacementSpreadsAcrossRacksThenBrokers(t *testing.T) {
	b := newBuilder(t).brokers("a", "a", "b", "b", "c", "c")
	a, err := NewPlanner(b.img).Place(12, 3)
	if err != nil {
		t.Fatal(err)
	}
	replicas, leaders := map[int]int{}, map[int]int{}
	for _, rs := range a {
		if len(racksOf(b.img, rs)) != 3 {
			t.Fatalf("replicas %v share a rack", rs)
		}
		leaders[rs[0]]++
		for _, r := range rs {
			replicas[r]++
		}
	}
	for id := range 6 {
		if replicas[id] != 6 || leaders[id] != 2 {
			t.Fatalf("broker %d holds %d replicas and %d leaders, want 6 and 2: %v", id, replicas[id], leaders[id], a)
		}
	}
}

func TestPlacementWithFewerRacksThanReplicas(t *testing.T) {
	b := newBuilder(t).brokers("a", "a", "a", "b")
	a, err := NewPlanner(b.img).Place(4, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range a {
		if len(racksOf(b.img, rs)) != 2 {
			t.Fatalf("replicas %v do not use both racks", rs)
		}
	}
}

func TestPlacementSkipsFencedAndDrainingBrokers(t *testing.T) {
	b := newBuilder(t).brokers("", "", "", "")
	b.do(brokerCmd(CmdFenceBroker, 1)).do(brokerCmd(CmdDrain, 2))
	a, err := NewPlanner(b.img).Place(5, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range a {
		if slices.Contains(rs, 1) || slices.Contains(rs, 2) {
			t.Fatalf("placed on an ineligible broker: %v", rs)
		}
	}
	if _, err := NewPlanner(b.img).Place(1, 3); !errors.Is(err, ErrInvalidReplicationFactor) {
		t.Fatalf("rf 3 over 2 live brokers: %v", err)
	}
	for _, n := range []int{0, MaxNewPartitions + 1} {
		if _, err := NewPlanner(b.img).Place(n, 1); !errors.Is(err, ErrInvalidPartitions) {
			t.Fatalf("%d partitions: %v", n, err)
		}
	}
}

func TestPlacementFavoursLessLoadedBrokers(t *testing.T) {
	b := newBuilder(t).brokers("", "", "")
	b.do(createTopic("old", []int{0, 1}, []int{1, 0}))
	a, err := NewPlanner(b.img).Place(2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if a[0][0] != 2 {
		t.Fatalf("first new replica on %v, want the empty broker 2", a)
	}
}

func TestDrainMoves(t *testing.T) {
	b := newBuilder(t).brokers("a", "b", "a", "b")
	b.do(createTopic("t", []int{0, 1}, []int{1, 0}, []int{2, 3}))
	b.do(brokerCmd(CmdDrain, 0))
	moves, err := NewPlanner(b.img).DrainMoves(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(moves) != 2 {
		t.Fatalf("moves = %+v", moves)
	}
	for _, m := range moves {
		if slices.Contains(m.Target, 0) || !slices.Contains(m.Target, 2) {
			t.Fatalf("move %+v should replace 0 by its rack peer 2", m)
		}
	}
	b.do(brokerCmd(CmdDrain, 2))
	if _, err := NewPlanner(b.img).DrainMoves(0); !errors.Is(err, ErrReassignmentInfeasible) && err != nil {
		t.Fatalf("err = %v", err)
	}
	b.do(brokerCmd(CmdDrain, 3))
	if _, err := NewPlanner(b.img).DrainMoves(0); !errors.Is(err, ErrReassignmentInfeasible) {
		t.Fatalf("drain with one broker left: %v", err)
	}
}

func TestReplicationFactorMoves(t *testing.T) {
	b := newBuilder(t).brokers("", "", "")
	b.do(createTopic("t", []int{0}, []int{1}))
	moves, err := NewPlanner(b.img).ReplicationFactorMoves("t", 3)
	if err != nil || len(moves) != 2 || len(moves[0].Target) != 3 || moves[0].Target[0] != 0 {
		t.Fatalf("raise to 3: %+v %v", moves, err)
	}
	b.do(Command{Type: CmdReassign, Reassign: &Reassign{Moves: moves}})
	if _, err := NewPlanner(b.img).ReplicationFactorMoves("t", 1); !errors.Is(err, ErrReassignmentInProgress) {
		t.Fatalf("while reassigning: %v", err)
	}
	b2 := newBuilder(t).brokers("", "", "")
	b2.do(createTopic("t", []int{0, 1, 2}))
	b2.do(alterISR(b2.part("t", 0), "t", 0, 2))
	moves, err = NewPlanner(b2.img).ReplicationFactorMoves("t", 2)
	if err != nil || !slices.Equal(moves[0].Target, []int{0, 2}) {
		t.Fatalf("lower to 2 should drop the out-of-sync replica 1: %+v %v", moves, err)
	}
	if _, err := NewPlanner(b2.img).ReplicationFactorMoves("t", 4); !errors.Is(err, ErrInvalidReplicationFactor) {
		t.Fatalf("rf 4: %v", err)
	}
}

// A topic created on one broker and grown to three replicas later gets its
// preferred leaders spread over the three.
func TestSpreadLeadersWhenRaisingReplication(t *testing.T) {
	b := newBuilder(t).brokers("")
	b.do(createTopic("t", []int{0}, []int{0}, []int{0}, []int{0}, []int{0}, []int{0}))
	b.do(register(1, "")).do(register(2, ""))
	pl := NewPlanner(b.img)
	moves, err := pl.ReplicationFactorMoves("t", 3)
	if err != nil || len(moves) != 6 {
		t.Fatalf("raise to 3: %+v %v", moves, err)
	}
	pl.SpreadLeaders(moves)
	leads := map[int]int{}
	for _, m := range moves {
		r := slices.Clone(m.Target)
		slices.Sort(r)
		if !slices.Equal(r, []int{0, 1, 2}) {
			t.Fatalf("target %v lost or gained a replica", m.Target)
		}
		leads[m.Target[0]]++
	}
	if leads[0] != 2 || leads[1] != 2 || leads[2] != 2 {
		t.Fatalf("preferred leaders per broker after spreading: %v (%+v)", leads, moves)
	}
	b.do(Command{Type: CmdReassign, Reassign: &Reassign{Moves: moves}})
	again := NewPlanner(b.img)
	m := []Move{{Topic: "t", Partition: 0, Target: slices.Clone(b.img.Topics["t"].Partitions[0].Replicas)}}
	again.SpreadLeaders(m)
	if !slices.Equal(m[0].Target, b.img.Topics["t"].Partitions[0].Replicas) {
		t.Fatalf("balanced leaders were reordered: %v", m[0].Target)
	}
}

func TestRebalanceMoves(t *testing.T) {
	b := newBuilder(t).brokers("", "")
	b.do(createTopic("t", []int{0}, []int{0}, []int{0}, []int{0}))
	b.do(register(2, "")).do(register(3, ""))
	moves := NewPlanner(b.img).RebalanceMoves()
	if len(moves) != 3 {
		t.Fatalf("moves = %+v", moves)
	}
	b.do(Command{Type: CmdReassign, Reassign: &Reassign{Moves: moves}})
	for _, id := range []int{1, 2, 3} {
		if n := len(b.img.Brokers); n != 4 || b.img.ReplicaCount(id) > 1 {
			t.Fatalf("broker %d holds %d", id, b.img.ReplicaCount(id))
		}
	}
}
