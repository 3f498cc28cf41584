package group

import (
	"testing"
)

// TestDeleteOffsets: offsets of topics no member consumes are deleted, and
// stay deleted after a restart; a topic a member of the group consumes
// keeps its offset and is answered ErrGroupSubscribedToTopic, until the
// member leaves.
func TestDeleteOffsets(t *testing.T) {
	for _, kind := range []string{"protocol", "simple"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t)
			e.topics.add("payments", 2)
			const g = "analytics-workers"
			must(t, e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: NoGeneration, Offsets: []OffsetCommit{
				{Topic: "orders", Partition: 0, Offset: 3}, {Topic: "payments", Partition: 0, Offset: 5},
				{Topic: "payments", Partition: 1, Offset: 6}}}))
			var leave func()
			if kind == "protocol" {
				res, err := e.c.JoinGroup(bg, ordersJoin(""))
				must(t, err)
				leave = func() { must(t, e.c.LeaveGroup(bg, g, res.MemberID)) }
			} else {
				must(t, e.c.Join(bg, g, "member-a"))
				_, err := e.c.Rebalance(bg, g, "orders")
				must(t, err)
				leave = func() { must(t, e.c.LeaveGroup(bg, g, "member-a")) }
			}

			errs, err := e.c.DeleteOffsets(bg, g, []TopicPartition{{"orders", 0}, {"payments", 0}, {"orders", 3}})
			must(t, err)
			wantErr(t, errs[0], ErrGroupSubscribedToTopic)
			wantErr(t, errs[2], ErrGroupSubscribedToTopic)
			if errs[1] != nil {
				t.Fatalf("payments-0: %v", errs[1])
			}
			want := map[TopicPartition]int64{{"orders", 0}: 3, {"payments", 0}: -1, {"payments", 1}: 6}
			for _, c := range []*Coordinator{e.c, e.restart()} {
				for tp, off := range want {
					o, found, err := c.Offset(g, tp.Topic, tp.Partition)
					must(t, err)
					if !found {
						o.Offset = -1
					}
					if o.Offset != off {
						t.Fatalf("committed %s-%d = %d, want %d", tp.Topic, tp.Partition, o.Offset, off)
					}
				}
			}

			leave()
			errs, err = e.c.DeleteOffsets(bg, g, []TopicPartition{{"orders", 0}, {"payments", 0}})
			must(t, err)
			for i, err := range errs {
				if err != nil {
					t.Fatalf("partition %d after the member left: %v", i, err)
				}
			}
			for _, c := range []*Coordinator{e.c, e.restart()} {
				if _, found, _ := c.Offset(g, "orders", 0); found {
					t.Fatal("orders-0 still committed after its delete")
				}
				if o, _, _ := c.Offset(g, "payments", 1); o.Offset != 6 {
					t.Fatalf("payments-1 = %d, want 6: only the partitions named are deleted", o.Offset)
				}
			}
		})
	}
}

// TestDeleteOffsetsOfAnotherProtocolType: members of a protocol type that
// is not Kafka's consumer do not say which topics they read, so their
// group is NON_EMPTY_GROUP while they are there.
func TestDeleteOffsetsOfAnotherProtocolType(t *testing.T) {
	e := newEnv(t)
	const g = "connect-cluster"
	must(t, e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: NoGeneration, Offsets: []OffsetCommit{{Topic: "orders", Partition: 0, Offset: 3}}}))
	res, err := e.c.JoinGroup(bg, JoinRequest{Group: g, ProtocolType: "connect", Protocols: []Protocol{{Name: "sessioned"}}})
	must(t, err)
	_, err = e.c.DeleteOffsets(bg, g, []TopicPartition{{"orders", 0}})
	wantErr(t, err, ErrNonEmptyGroup)
	must(t, e.c.LeaveGroup(bg, g, res.MemberID))
	errs, err := e.c.DeleteOffsets(bg, g, []TopicPartition{{"orders", 0}})
	must(t, err)
	if errs[0] != nil {
		t.Fatalf("after the member left: %v", errs[0])
	}
}

func TestDeleteOffsetsOfUnknownGroup(t *testing.T) {
	e := newEnv(t)
	_, err := e.c.DeleteOffsets(bg, "nobody", []TopicPartition{{"orders", 0}})
	wantErr(t, err, ErrUnknownGroup)
	_, err = e.c.DeleteOffsets(bg, "", []TopicPartition{{"orders", 0}})
	wantErr(t, err, ErrInvalidArgument)
}
