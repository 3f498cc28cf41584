package group

import (
	"reflect"
	"testing"
)

func subs(topics []string, members ...string) []Subscription {
	out := make([]Subscription, 0, len(members))
	for _, m := range members {
		out = append(out, Subscription{MemberID: m, Topics: topics})
	}
	return out
}

func TestAssignPartitions(t *testing.T) {
	orders := []string{"orders"}
	tests := []struct {
		name       string
		strategy   string
		members    []Subscription
		partitions map[string]int32
		want       []Assignment
	}{
		{
			name: "seed: 4 partitions over member-a, member-b", strategy: StrategyRange,
			members: subs(orders, "member-a", "member-b"), partitions: map[string]int32{"orders": 4},
			want: []Assignment{asg("member-a", "orders", 0, 1), asg("member-b", "orders", 2, 3)},
		},
		{
			name: "seed: registered out of order, sorted by id", strategy: "",
			members: subs(orders, "member-b", "member-a"), partitions: map[string]int32{"orders": 4},
			want: []Assignment{asg("member-a", "orders", 0, 1), asg("member-b", "orders", 2, 3)},
		},
		{
			name: "seed: one member left takes everything", strategy: StrategyRange,
			members: subs(orders, "member-b"), partitions: map[string]int32{"orders": 4},
			want: []Assignment{asg("member-b", "orders", 0, 1, 2, 3)},
		},
		{
			name: "seed: member-b and member-c after cleanup", strategy: StrategyRange,
			members: subs(orders, "member-c", "member-b"), partitions: map[string]int32{"orders": 4},
			want: []Assignment{asg("member-b", "orders", 0, 1), asg("member-c", "orders", 2, 3)},
		},
		{
			name: "range: first n%m members get one extra", strategy: StrategyRange,
			members: subs(orders, "a", "b", "c"), partitions: map[string]int32{"orders": 5},
			want: []Assignment{asg("a", "orders", 0, 1), asg("b", "orders", 2, 3), asg("c", "orders", 4)},
		},
		{
			name: "range: more members than partitions", strategy: StrategyRange,
			members: subs(orders, "a", "b", "c"), partitions: map[string]int32{"orders": 2},
			want: []Assignment{asg("a", "orders", 0), asg("b", "orders", 1), asg("c", "orders")},
		},
		{
			name: "range: per topic over its subscribers", strategy: StrategyRange,
			members: []Subscription{
				{MemberID: "a", Topics: []string{"orders", "payments"}},
				{MemberID: "b", Topics: []string{"orders"}},
			},
			partitions: map[string]int32{"orders": 3, "payments": 2},
			want: []Assignment{
				{MemberID: "a", Topics: []TopicPartitions{{Topic: "orders", Partitions: []int32{0, 1}}, {Topic: "payments", Partitions: []int32{0, 1}}}},
				asg("b", "orders", 2),
			},
		},
		{
			name: "roundrobin: dealt in member order", strategy: StrategyRoundRobin,
			members: subs([]string{"orders", "payments"}, "b", "a"), partitions: map[string]int32{"orders": 3, "payments": 2},
			want: []Assignment{
				{MemberID: "a", Topics: []TopicPartitions{{Topic: "orders", Partitions: []int32{0, 2}}, {Topic: "payments", Partitions: []int32{1}}}},
				{MemberID: "b", Topics: []TopicPartitions{{Topic: "orders", Partitions: []int32{1}}, {Topic: "payments", Partitions: []int32{0}}}},
			},
		},
		{
			name: "roundrobin: skips members not subscribed", strategy: StrategyRoundRobin,
			members: []Subscription{
				{MemberID: "a", Topics: []string{"orders"}},
				{MemberID: "b", Topics: []string{"payments"}},
				{MemberID: "c", Topics: []string{"orders", "payments"}},
			},
			partitions: map[string]int32{"orders": 3, "payments": 2},
			want: []Assignment{
				asg("a", "orders", 0, 2),
				asg("b", "payments", 0),
				{MemberID: "c", Topics: []TopicPartitions{{Topic: "orders", Partitions: []int32{1}}, {Topic: "payments", Partitions: []int32{1}}}},
			},
		},
		{
			name: "unknown topics are skipped", strategy: StrategyRange,
			members: subs([]string{"gone"}, "a"), partitions: map[string]int32{},
			want: []Assignment{asg("a", "gone")},
		},
		{
			name: "no members", strategy: StrategyRoundRobin,
			members: nil, partitions: map[string]int32{"orders": 4},
			want: []Assignment{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AssignPartitions(tt.strategy, tt.members, tt.partitions)
			must(t, err)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
			again, _ := AssignPartitions(tt.strategy, tt.members, tt.partitions)
			if !reflect.DeepEqual(got, again) {
				t.Fatal("same input, different assignment")
			}
		})
	}
}

func TestAssignPartitionsRejects(t *testing.T) {
	_, err := AssignPartitions("sticky", subs([]string{"orders"}, "a"), map[string]int32{"orders": 1})
	wantErr(t, err, ErrInvalidArgument)
	_, err = AssignPartitions(StrategyRange, subs([]string{"orders"}, "a", "a"), map[string]int32{"orders": 1})
	wantErr(t, err, ErrInvalidArgument)
}

// Every partition of every subscribed topic goes to exactly one subscriber,
// and sizes differ by at most one per topic (range) or overall (roundrobin
// with identical subscriptions).
func TestAssignPartitionsCoversEachPartitionOnce(t *testing.T) {
	for _, strategy := range []string{StrategyRange, StrategyRoundRobin} {
		for members := 1; members <= 7; members++ {
			for n := int32(0); n <= 13; n++ {
				var ms []string
				for i := 0; i < members; i++ {
					ms = append(ms, string(rune('a'+i)))
				}
				got, err := AssignPartitions(strategy, subs([]string{"t"}, ms...), map[string]int32{"t": n})
				must(t, err)
				owner := map[int32]string{}
				minSize, maxSize := int(n), 0
				for _, a := range got {
					size := 0
					for _, tp := range a.Topics {
						for _, p := range tp.Partitions {
							if prev, dup := owner[p]; dup {
								t.Fatalf("%s %d/%d: partition %d to %s and %s", strategy, n, members, p, prev, a.MemberID)
							}
							owner[p] = a.MemberID
							size++
						}
					}
					minSize, maxSize = min(minSize, size), max(maxSize, size)
				}
				if len(owner) != int(n) || maxSize-minSize > 1 {
					t.Fatalf("%s %d partitions/%d members: %d assigned, sizes %d..%d", strategy, n, members, len(owner), minSize, maxSize)
				}
			}
		}
	}
}
