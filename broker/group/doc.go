// Package group is the consumer group coordinator: membership, the
// generation protocol, partition assignment, committed offsets and group
// administration, as a library with no HTTP and no storage of its own.
//
// # Persistence
//
// Every change to a group is encoded as a small versioned JSON record,
// appended write-ahead to a [Journal] under the group id as key, and only
// then applied. The broker's journal is the internal replicated topic
// __consumer_offsets, so a group's records live in one partition and the
// leader of that partition is the group's coordinator: replication of group
// state is the replication of that partition, with no second mechanism.
// [Coordinator.Replay] rebuilds state from the stored records.
// [Coordinator.Snapshot] returns records that recreate the current state, and
// [Coordinator.WriteSnapshot] appends them to the journal group by group
// under each group's lock, after which the owner may drop every record
// appended before the call (the broker moves the partition's log start).
//
// # Two kinds of members
//
// A group holds one set of members. Members registered through the original
// single-node API ([Coordinator.Join], [Coordinator.Heartbeat]) are "simple"
// members: they have a last-seen time and nothing else. Members that join
// through the generation protocol ([Coordinator.JoinGroup]) are "protocol"
// members: they also carry subscribed topics, timeouts and the assignment of
// the current generation. Both kinds:
//
//   - leave through [Coordinator.LeaveGroup], are listed by Describe and
//     DescribeMembers, counted by ListGroups, judged by
//     StaleMembers/RemoveStaleMembers and the cleanup pass, and take part in
//     the original API's Rebalance and CleanupAndRebalance (saved per-topic
//     assignments over every member);
//   - keep a group non-empty, so ResetOffsets and DeleteGroup are refused
//     while either kind is present.
//
// Only protocol members take part in the generation barrier: a rebalance
// waits for every protocol member to rejoin, and a generation's assignment
// covers only protocol members. Adding or removing a simple member never
// starts a rebalance; removing a protocol member (leave, stale removal) does.
// A simple member becomes a protocol member by calling JoinGroup with its id;
// SyncGroup, HeartbeatGroup and fenced commits from a simple member answer
// [ErrIllegalGeneration], which tells a client to join.
//
// The two kinds cannot be one without changing one of the two contracts.
// The original API's join and heartbeat answer at once, and its heartbeat
// creates the member; a generation member that joined that way would be
// part of the barrier, so every such join would start a rebalance that
// waits for it to join again, which it never does: after the rebalance
// timeout it would be dropped, where the original API keeps a member until
// it is stale by the timeout a request names (or, if the barrier waited
// for it, every protocol member's join would wait out that timeout).
// Saved assignments are a topic's partitions over every member, computed
// when asked and kept per group and topic; a generation's assignment is
// the subscribed topics over the members that joined, recomputed at every
// generation. So a simple member stays outside the barrier, and saved
// assignments stay state of their own.
//
// # Members that assign
//
// A protocol member that joins with a protocol type and protocols (a
// Kafka consumer) is assigned by its generation's leader, not by the
// group's strategy: the coordinator picks the protocol, the leader's
// SyncGroup brings every member's assignment (a sync record), and the
// other members' SyncGroups wait for it, as in Kafka's classic protocol
// (assigners.go). A generation holds members of one kind only.
//
// # Concurrency
//
// Every change to one group is serialised by that group's mutex, held across
// the journal append so that records are appended in exactly the order they
// are applied. A mutex per group was chosen over one goroutine per
// coordinator because most operations are short request/response changes
// that would only queue behind each other in a goroutine, and because groups
// are independent: a slow journal append for one group must not stall
// another. The two long operations, a JoinGroup waiting for the generation
// barrier and a SyncGroup waiting for its leader's assignment, register
// themselves and release the mutex while they wait; whoever completes the
// barrier (the last joiner, a leave, the rebalance timer, the end of a new
// group's initial delay (initialdelay.go) or the cleanup pass) answers
// every waiting join, and the leader's SyncGroup, or the
// next rebalance, every waiting sync. The coordinator's own mutex only
// guards the map of groups and is never held while a group mutex is taken.
//
// Nothing that waits on another broker runs under a group's mutex: the
// offsets that Describe and ResetOffsets read from partition leaders are
// read after the group is let go of (a reset checks for members again
// before it writes), under the request's context. Close takes no group
// mutex at all: it marks the coordinator closed and cancels the journal
// appends and reads in flight, so the broker can call it from the
// goroutine that applies metadata whatever its groups are waiting for;
// the last operation on each group answers its waiting joins and syncs, and Drained
// says when none is left.
package group
