package group

import (
	"reflect"
	"testing"
	"time"
)

func TestDescribe(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	e.topics.add("payments", 2)
	e.topics.set("orders", 0, 0, 42, 45)
	e.topics.set("orders", 1, 0, 10, 10)
	e.topics.set("orders", 2, 5, 5, 5)
	e.topics.set("payments", 0, 3, 10, 12)

	_, err := e.c.Describe(bg, g, nil)
	wantErr(t, err, ErrUnknownGroup)

	_, err = e.c.SetConfig(bg, g, GroupConfig{SessionTimeout: 45 * time.Second})
	must(t, err)
	res, err := e.c.JoinGroup(bg, JoinRequest{Group: g, MemberID: "", ClientID: "kairoctl", Topics: []string{"orders"}})
	must(t, err)
	_, err = e.c.SyncGroup(bg, g, res.MemberID, 1)
	must(t, err)
	e.clock.Advance(time.Second)
	must(t, e.c.Join(bg, g, "member-s"))
	must(t, e.c.CommitOffsets(bg, CommitRequest{Group: g, MemberID: res.MemberID, Generation: 1, Offsets: []OffsetCommit{
		{Topic: "orders", Partition: 0, Offset: 40, Metadata: "m"},
		{Topic: "orders", Partition: 2, Offset: 5},
	}}))

	d, err := e.c.Describe(bg, g, []string{"payments"})
	must(t, err)
	want := Description{
		Group: g, State: Stable, Generation: 1, AssignmentStrategy: StrategyRange,
		SessionTimeout: 45 * time.Second, Leader: res.MemberID,
		Members: []DescribedMember{
			{ID: res.MemberID, ClientID: "kairoctl", LastSeen: noon, Topics: []string{"orders"}, Assignment: tps("orders", 0, 1, 2, 3)},
			{ID: "member-s", LastSeen: noon.Add(time.Second), Topics: []string{}, Assignment: []TopicPartitions{}},
		},
		Offsets: []PartitionLag{
			{Topic: "orders", Partition: 0, CommittedOffset: 40, HighWatermark: 42, LogEndOffset: 45, Lag: 2, Metadata: "m"},
			{Topic: "orders", Partition: 2, CommittedOffset: 5, HighWatermark: 5, LogEndOffset: 5, Lag: 0},
			{Topic: "payments", Partition: 0, CommittedOffset: -1, HighWatermark: 10, LogEndOffset: 12, Lag: 7},
			{Topic: "payments", Partition: 1, CommittedOffset: -1, HighWatermark: 0, LogEndOffset: 0, Lag: 0},
		},
		TotalLag: 9,
	}
	if res.MemberID > "member-s" {
		want.Members[0], want.Members[1] = want.Members[1], want.Members[0]
	}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("describe =\n%+v\nwant\n%+v", d, want)
	}

	// A simple member shows what the saved assignments give it; a deleted
	// topic's offsets read as -1 and add no lag.
	_, err = e.c.Rebalance(bg, g, "payments")
	must(t, err)
	e.topics.remove("orders")
	d, err = e.c.Describe(bg, g, nil)
	must(t, err)
	for _, m := range d.Members {
		if m.ID == "member-s" && (len(m.Topics) != 1 || m.Topics[0] != "payments" || len(m.Assignment) != 1) {
			t.Fatalf("simple member = %+v", m)
		}
	}
	if d.Offsets[0].HighWatermark != -1 || d.Offsets[0].Lag != -1 || d.TotalLag != 0 {
		t.Fatalf("deleted topic's offsets = %+v total %d", d.Offsets[0], d.TotalLag)
	}
	_, err = e.c.Describe(bg, g, []string{"nope"})
	wantErr(t, err, ErrUnknownTopic)
}

func TestListGroups(t *testing.T) {
	e := newEnv(t)
	if got := e.c.ListGroups(); got == nil || len(got) != 0 {
		t.Fatalf("list = %#v", got)
	}
	must(t, e.c.Join(bg, "simple", "member-a"))
	must(t, e.c.CommitOffsets(bg, CommitRequest{Group: "offsets", Generation: NoGeneration, Offsets: []OffsetCommit{{Topic: "orders", Offset: 1}}}))
	_, err := e.c.SetConfig(bg, "config-only", GroupConfig{})
	must(t, err)
	_, err = e.c.JoinGroup(bg, JoinRequest{Group: "proto", Topics: []string{"orders"}})
	must(t, err)
	want := []Summary{
		{Group: "offsets", State: Empty},
		{Group: "proto", State: CompletingRebalance, Generation: 1, Members: 1},
		{Group: "simple", State: Stable, Members: 1},
	}
	if got := e.c.ListGroups(); !reflect.DeepEqual(got, want) {
		t.Fatalf("list = %+v", got)
	}
	if _, err := e.c.Describe(bg, "config-only", nil); err != nil {
		t.Fatalf("a group with only a config is still a group: %v", err)
	}
}

func TestStateString(t *testing.T) {
	for s, want := range map[State]string{Empty: "Empty", PreparingRebalance: "PreparingRebalance",
		CompletingRebalance: "CompletingRebalance", Stable: "Stable", Dead: "Dead", State(9): "Unknown"} {
		if s.String() != want {
			t.Errorf("%d = %q, want %q", s, s, want)
		}
	}
}
