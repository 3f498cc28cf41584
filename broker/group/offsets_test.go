package group

import (
	"reflect"
	"testing"
)

func TestCommitAndLookup(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	// The original API: no member, no generation, always accepted.
	must(t, e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: NoGeneration,
		Offsets: []OffsetCommit{{Topic: "orders", Partition: 0, Offset: 42}}}))
	got, found, err := e.c.Offset(g, "orders", 0)
	must(t, err)
	if !found || got != (OffsetCommit{Topic: "orders", Partition: 0, Offset: 42}) {
		t.Fatalf("offset = %+v %v", got, found)
	}
	got, found, err = e.c.Offset(g, "orders", 1)
	must(t, err)
	if found || got.Offset != 0 {
		t.Fatalf("missing offset = %+v %v, want 0 and not found", got, found)
	}
	if _, found, _ := e.c.Offset("nobody", "orders", 0); found {
		t.Fatal("offset found for an unknown group")
	}
	// A commit replaces; several commit atomically.
	must(t, e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: NoGeneration, Offsets: []OffsetCommit{
		{Topic: "orders", Partition: 0, Offset: 43, Metadata: "m"}, {Topic: "orders", Partition: 3, Offset: 7},
	}}))
	err = e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: NoGeneration, Offsets: []OffsetCommit{
		{Topic: "orders", Partition: 1, Offset: 1}, {Topic: "orders", Partition: 4, Offset: 1},
	}})
	wantErr(t, err, ErrUnknownPartition)
	want := []OffsetCommit{{Topic: "orders", Partition: 0, Offset: 43, Metadata: "m"}, {Topic: "orders", Partition: 3, Offset: 7}}
	all, err := e.c.Offsets(g)
	must(t, err)
	if !reflect.DeepEqual(all, want) {
		t.Fatalf("offsets = %+v", all)
	}
	if all, _ := e.restart().Offsets(g); !reflect.DeepEqual(all, want) {
		t.Fatalf("offsets after restart = %+v", all)
	}
	if none, _ := e.c.Offsets("nobody"); none == nil || len(none) != 0 {
		t.Fatalf("offsets of unknown group = %#v", none)
	}
}

func TestCommitValidation(t *testing.T) {
	e := newEnv(t)
	long := make([]byte, maxMetadataLen+1)
	tests := []struct {
		name string
		req  CommitRequest
		want error
	}{
		{"no group", CommitRequest{Generation: NoGeneration, Offsets: []OffsetCommit{{Topic: "orders"}}}, ErrInvalidArgument},
		{"no offsets", CommitRequest{Group: "g", Generation: NoGeneration}, ErrInvalidArgument},
		{"unknown topic", CommitRequest{Group: "g", Generation: NoGeneration, Offsets: []OffsetCommit{{Topic: "nope"}}}, ErrUnknownTopic},
		{"negative partition", CommitRequest{Group: "g", Generation: NoGeneration, Offsets: []OffsetCommit{{Topic: "orders", Partition: -1}}}, ErrUnknownPartition},
		{"partition past the end", CommitRequest{Group: "g", Generation: NoGeneration, Offsets: []OffsetCommit{{Topic: "orders", Partition: 4}}}, ErrUnknownPartition},
		{"metadata too long", CommitRequest{Group: "g", Generation: NoGeneration, Offsets: []OffsetCommit{{Topic: "orders", Metadata: string(long)}}}, ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantErr(t, e.c.CommitOffsets(bg, tt.req), tt.want) })
	}
	if len(e.journal.Records()) != 0 || len(e.c.groupIDs()) != 0 {
		t.Fatal("a rejected commit stored something")
	}
}

// TestNegativeCommitClears: a negative offset, Kafka clients' "none",
// clears the partition's commit in the same record as the others it
// comes with, and stays cleared when the journal is replayed.
func TestNegativeCommitClears(t *testing.T) {
	e := newEnv(t)
	const g = "resetters"
	commit := func(offsets ...OffsetCommit) {
		t.Helper()
		must(t, e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: NoGeneration, Offsets: offsets}))
	}
	commit(OffsetCommit{Topic: "orders", Partition: 0, Offset: 5}, OffsetCommit{Topic: "orders", Partition: 1, Offset: 6})
	commit(OffsetCommit{Topic: "orders", Partition: 0, Offset: -2}, OffsetCommit{Topic: "orders", Partition: 1, Offset: 8},
		OffsetCommit{Topic: "orders", Partition: 2, Offset: -1})
	want := map[TopicPartition]int64{{"orders", 1}: 8}
	for _, run := range []string{"live", "replayed"} {
		c := e.c
		if run == "replayed" {
			c = e.restart()
		}
		all, err := c.Offsets(g)
		must(t, err)
		got := map[TopicPartition]int64{}
		for _, o := range all {
			got[TopicPartition{o.Topic, o.Partition}] = o.Offset
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: offsets %v, want %v", run, got, want)
		}
	}
}

func TestCommitFencing(t *testing.T) {
	e := newEnv(t)
	const g = "analytics-workers"
	must(t, e.c.Join(bg, g, "simple"))
	a, err := e.c.JoinGroup(bg, ordersJoin(""))
	must(t, err)
	one := []OffsetCommit{{Topic: "orders", Partition: 0, Offset: 5}}
	commit := func(member string, gen int32) error {
		return e.c.CommitOffsets(bg, CommitRequest{Group: g, MemberID: member, Generation: gen, Offsets: one})
	}
	tests := []struct {
		name   string
		member string
		gen    int32
		want   error
	}{
		{"current generation", a.MemberID, 1, nil},
		{"unfenced", "", NoGeneration, nil},
		{"stale generation", a.MemberID, 0, ErrIllegalGeneration},
		{"future generation", a.MemberID, 2, ErrIllegalGeneration},
		{"unknown member", "nope", 1, ErrUnknownMember},
		{"generation without member", "", 1, ErrUnknownMember},
		{"simple member", "simple", 1, ErrIllegalGeneration},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := commit(tt.member, tt.gen); tt.want == nil {
				must(t, err)
			} else {
				wantErr(t, err, tt.want)
			}
		})
	}
	err = e.c.CommitOffsets(bg, CommitRequest{Group: "nobody", MemberID: a.MemberID, Generation: 1, Offsets: one})
	wantErr(t, err, ErrUnknownMember)

	// During a rebalance the current generation may still commit (an eager
	// consumer commits before it rejoins); once the next generation exists
	// the old one is fenced.
	done := make(chan JoinResult, 1)
	go func() {
		r, err := e.c.JoinGroup(bg, ordersJoin(""))
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	waitState(t, e.c, g, PreparingRebalance)
	must(t, commit(a.MemberID, 1))
	next, err := e.c.JoinGroup(bg, ordersJoin(a.MemberID))
	must(t, err)
	<-done
	wantErr(t, commit(a.MemberID, 1), ErrIllegalGeneration)
	must(t, commit(a.MemberID, next.Generation))
}
