// Package replica holds the partition replicas of one broker: their local
// logs, the leader and follower roles, the high watermark, the in-sync
// replica set (ISR), follower fetching and acks=all.
//
// # Roles
//
// The cluster metadata (a raft state machine in broker/cluster) names, for
// every partition, its replicas, its leader, the leader epoch and the
// committed ISR. The Manager follows it: it opens DATA/<topic>-<partition>
// for each partition assigned here, makes the replica leader or follower of
// the named broker in the named epoch, applies topic config changes to the
// log, and deletes replicas no longer assigned (only once the metadata is
// caught up, so a restarting broker never deletes on a partial view).
// The replicas one metadata change assigns here are opened a few at a time
// (openmany.go): a burst of topic creations brings hundreds in one image,
// and a new one costs mostly waiting for the disk. Their new directories
// are made durable by one fsync of the data directory, before any of them
// is used.
//
// A topic deleted and created again under the same name is another topic:
// it has a new topic id, and its leader epochs start again at 0. Every
// replica directory records its topic id (partition.metadata), every
// replica request carries it, and a leader refuses a follower of another
// id (INCONSISTENT_TOPIC_ID), so the logs of the two topics never mix. A
// directory whose id is not the metadata's is deleted and the partition
// starts afresh, however this broker learnt of the change: it may have
// missed the image without the topic (skipped images, a raft snapshot
// install, a restart).
//
// # Leader
//
// On election the leader records in its log that its epoch starts at the
// current log end offset (storage's AssignEpoch, as Kafka does), so the
// epoch-end requests of its followers are answered from the log's epoch
// cache even before it has written anything.
//
// Produce appends one batch stamped with the leader epoch. Produces to one
// partition that arrive while the leader writes are written together
// (group commit, groupcommit.go): each stays its own batch, and the group
// costs one write and, with flush.messages or flush.ms, one fsync. The leader learns
// each follower's log end offset from its fetch offset and keeps the high
// watermark (HW) at the smallest log end offset over the ISR; it never moves
// back. Consumers read from the leader only and only below the HW, so they
// never see a record that a leader change could take back. A consumer that
// asks for a record the leader has but the HW does not cover yet (right
// after an acks=1 produce) waits for the HW to cover it, even without a
// long poll of its own, for at most replica.lag.time.max.ms: by then a
// follower holding it back has been shrunk out of the ISR.
//
// A follower that has not been caught up with the leader's log end for
// replica.lag.time.max.ms is proposed for removal from the ISR; one whose
// log reaches the HW (and the start of the leader's epoch) is proposed for
// addition. Proposals go to the controller (AlterISR, fenced by leader epoch
// and partition epoch) and only a committed ISR is trusted: until a removal
// commits, the removed member still holds the HW back; an added member
// counts at once (Kafka's "maximal ISR") and keeps counting until the
// controller's answer is definite. A proposal left without an answer (a
// timeout, a broken connection) may have been committed: it stays pending
// and is sent again; one refused because the leader's view is stale stays
// pending until the metadata brings the current state.
//
// acks=all is refused up front (nothing written) when the ISR is smaller
// than min.insync.replicas; otherwise the producer waits until the HW covers
// its batch. Every wait in this package — acks=all, a consumer's long poll,
// a follower's long poll on the leader — blocks on a channel closed when the
// HW or the log end moves, never on a sleep or a polling interval: a
// follower's fetch that advances the HW wakes the producers whose batches
// it covers, and only those (ackwaiters.go, ordered by offset, as Kafka's
// produce purgatory). A follower's session parks on the leader until an
// append to any of its partitions wakes it (the leader's purgatory for
// delayed fetches, sessionserve.go).
//
// A leader appends and serves consumers only under the metadata lease
// (lease.go): while this broker's metadata is known to be current. A
// broker stopped or stalled — or cut off from the controller for a
// session timeout — would otherwise answer, the moment it runs again, the
// requests queued meanwhile as the leader it was, perhaps of a topic that
// was deleted and created again; those requests wait for the next
// heartbeat to confirm its metadata instead.
//
// The leader also answers offset lookups by timestamp from the log's time
// index (OffsetForTimestamp, capped at the HW) and moves the log start
// forward on request (DeleteRecords, at most to the HW), which the group
// coordinator uses to drop journal records a snapshot has replaced.
// Followers follow the leader's log start with their next fetch.
//
// # Follower
//
// A follower runs one fetcher per leader broker (fetcher.go), as Kafka's
// replica fetcher threads do: it carries every partition the follower
// replicates from that leader in one fetch session (Kafka's KIP-227) on
// the peer transport (broker/peer; protocol.go, sessions.go). One long
// poll asks for raw batches of all of them from their log end offsets,
// and after the first request of a session only what changed is listed;
// the leader answers as soon as any partition has data. An idle follower
// therefore costs one request per leader per replica.fetch.wait.max.ms,
// whatever the number of partitions. Partitions join and leave the
// session as leaderships move, without restarting it.
//
// Each fetch names the latest epoch in the follower's log. If the leader's
// log ends that epoch before the fetch offset, or does not know it, the
// answer is where it ends instead of batches (Kafka's diverging epoch, the
// OffsetsForLeaderEpoch answer carried by the fetch), and the follower
// truncates there, so a deposed leader's unreplicated tail is discarded.
// Otherwise the follower appends the batches verbatim (offsets, epochs and
// CRCs as the leader wrote them, so replicas are byte-identical) and takes
// the leader's HW. A follower whose log ends below the leader's log start
// offset restarts its log there. Both sides reject requests that carry
// another leader epoch than theirs. Each partition fails, truncates or
// backs off on its own; the session and the other partitions go on.
//
// # Durability
//
// fsync follows the topic's flush settings in broker/storage; as in Kafka,
// acks=all with min.insync.replicas ≥ 2 is the durability guarantee.
package replica
