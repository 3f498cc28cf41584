package group

import (
	"reflect"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestResetOffsets(t *testing.T) {
	const g = "analytics-workers"
	setup := func(t *testing.T) *env {
		e := newEnv(t)
		e.topics.add("payments", 2)
		// orders: partition p holds offsets [10p, 10p+10), HW at 10p+8,
		// record timestamps 1000, 1001, … from the log start.
		for p := range 4 {
			var times []int64
			for i := range 10 {
				times = append(times, int64(1000+i))
			}
			start := int64(10 * p)
			e.topics.set("orders", p, start, start+8, start+10, times...)
		}
		e.topics.set("payments", 0, 0, 3, 3)
		e.topics.set("payments", 1, 5, 9, 9)
		must(t, e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: NoGeneration,
			Offsets: []OffsetCommit{{Topic: "payments", Partition: 1, Offset: 6, Metadata: "x"}}}))
		return e
	}
	orders := func(offs ...int64) []PartitionOffset {
		var out []PartitionOffset
		for p, o := range offs {
			out = append(out, PartitionOffset{Topic: "orders", Partition: int32(p), Offset: o})
		}
		return out
	}
	tests := []struct {
		name string
		req  ResetRequest
		want []PartitionOffset
		err  error
	}{
		{"earliest", ResetRequest{To: ResetEarliest, Topics: []string{"orders"}}, orders(0, 10, 20, 30), nil},
		{"latest is the high watermark", ResetRequest{To: ResetLatest, Topics: []string{"orders"}}, orders(8, 18, 28, 38), nil},
		{"offset, clamped to the log", ResetRequest{To: ResetOffset, Offset: ptr[int64](15), Topics: []string{"orders"}}, orders(8, 15, 20, 30), nil},
		{"timestamp", ResetRequest{To: ResetTimestamp, Timestamp: ptr[int64](1003), Topics: []string{"orders"}}, orders(3, 13, 23, 33), nil},
		{"timestamp after every record", ResetRequest{To: ResetTimestamp, Timestamp: ptr[int64](5000), Topics: []string{"orders"}}, orders(8, 18, 28, 38), nil},
		{"no topics: the committed ones", ResetRequest{To: ResetEarliest},
			[]PartitionOffset{{Topic: "payments", Partition: 0, Offset: 0}, {Topic: "payments", Partition: 1, Offset: 5}}, nil},
		{"unknown target", ResetRequest{To: "middle", Topics: []string{"orders"}}, nil, ErrInvalidArgument},
		{"offset missing", ResetRequest{To: ResetOffset, Topics: []string{"orders"}}, nil, ErrInvalidArgument},
		{"negative offset", ResetRequest{To: ResetOffset, Offset: ptr[int64](-1), Topics: []string{"orders"}}, nil, ErrInvalidArgument},
		{"timestamp missing", ResetRequest{To: ResetTimestamp, Topics: []string{"orders"}}, nil, ErrInvalidArgument},
		{"unknown topic", ResetRequest{To: ResetEarliest, Topics: []string{"orders", "nope"}}, nil, ErrUnknownTopic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t)
			before := view(e.c)
			got, err := e.c.ResetOffsets(bg, g, tt.req)
			if tt.err != nil {
				wantErr(t, err, tt.err)
				if !reflect.DeepEqual(view(e.c), before) {
					t.Fatal("a refused reset changed state")
				}
				return
			}
			must(t, err)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("reset = %+v\nwant %+v", got, tt.want)
			}
			for _, c := range []*Coordinator{e.c, e.restart()} {
				for _, po := range tt.want {
					o, found, _ := c.Offset(g, po.Topic, po.Partition)
					if !found || o.Offset != po.Offset || o.Metadata != "" {
						t.Fatalf("committed %s/%d = %+v, want %d", po.Topic, po.Partition, o, po.Offset)
					}
				}
			}
		})
	}
}

func TestResetAndDeleteRefusedWhileMembersActive(t *testing.T) {
	for _, kind := range []string{"simple", "protocol"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t)
			const g = "analytics-workers"
			must(t, e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: NoGeneration,
				Offsets: []OffsetCommit{{Topic: "orders", Partition: 0, Offset: 3}}}))
			var leave func()
			if kind == "simple" {
				must(t, e.c.Join(bg, g, "member-a"))
				leave = func() { must(t, e.c.LeaveGroup(bg, g, "member-a")) }
			} else {
				res, err := e.c.JoinGroup(bg, ordersJoin(""))
				must(t, err)
				leave = func() { must(t, e.c.LeaveGroup(bg, g, res.MemberID)) }
			}
			_, err := e.c.ResetOffsets(bg, g, ResetRequest{To: ResetLatest, Topics: []string{"orders"}})
			wantErr(t, err, ErrNonEmptyGroup)
			wantErr(t, e.c.DeleteGroup(bg, g), ErrNonEmptyGroup)
			if o, _, _ := e.c.Offset(g, "orders", 0); o.Offset != 3 {
				t.Fatal("refused reset changed the offset")
			}

			leave()
			e.topics.set("orders", 0, 0, 9, 9)
			got, err := e.c.ResetOffsets(bg, g, ResetRequest{To: ResetLatest, Topics: []string{"orders"}})
			must(t, err)
			if got[0] != (PartitionOffset{Topic: "orders", Partition: 0, Offset: 9}) {
				t.Fatalf("reset = %+v", got)
			}
			must(t, e.c.DeleteGroup(bg, g))
			wantErr(t, e.c.DeleteGroup(bg, g), ErrUnknownGroup)
			for _, c := range []*Coordinator{e.c, e.restart()} {
				if _, found, _ := c.Offset(g, "orders", 0); found {
					t.Fatal("offset survived the group's deletion")
				}
				_, err := c.Describe(bg, g, nil)
				wantErr(t, err, ErrUnknownGroup)
			}
			// A new generation after deletion starts again at 1.
			res, err := e.c.JoinGroup(bg, ordersJoin(""))
			must(t, err)
			if res.Generation != 1 {
				t.Fatalf("generation after delete = %d", res.Generation)
			}
		})
	}
}
