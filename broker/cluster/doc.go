// Package cluster is KairoLog's metadata quorum and controller.
//
// Every broker runs a Node: a member of a hashicorp/raft group whose
// replicated state machine is the cluster metadata (package metadata:
// brokers, topics, replica placement, leaders, leader epochs, ISRs,
// configs). The raft leader is the controller. It tracks broker
// heartbeats, fences brokers silent for the session timeout (counted from
// no earlier than its own start, or than the end of a stall of its own
// process, during which it handled no heartbeat), elects partition
// leaders from the ISR (out-of-sync replicas only where a topic sets
// unclean.leader.election.enable), commits ISR changes proposed by
// partition leaders, drives reassignments and drains, and moves leadership
// back to preferred replicas.
//
// # Lifecycle
//
// Start opens <data-dir>/metadata (raft-boltdb log, file snapshots),
// listens for raft on Config.RaftListen and returns at once. An initial
// voter without raft state bootstraps with the --initial-voters list
// (identical on every voter); with state it never bootstraps again. Other
// brokers join as non-voters through Config.JoinAddresses (peer
// addresses). Ready reports when the broker has registered and caught
// up; Close leaves (handing controllership to another voter first). For a
// clean stop call ControlledShutdown, stop serving partitions, then Close.
//
// An idle cluster commits nothing: its raft traffic is the leader's
// heartbeats. Followers learn of a commit from the barrier the leader
// appends after it (commit.go), not from a periodic empty append.
//
// RemoveBroker takes a drained broker out of the quorum and the metadata
// for good as far as that process goes: still running, it stays out. Its
// id is free again, though: a broker started later with it — a
// StatefulSet scaled down and up again, on the retained volume with the
// old raft state — is refused registration, takes that as the sign that
// it is a new incarnation of a removed broker, and joins again as a new
// non-voter (membership.go explains why its old raft state can stay).
// Removing a voter never leaves the quorum less fault tolerant: a live
// non-voter is promoted in its place first, or the removal is refused with
// ErrVoterNotReplaceable (voters.go).
//
// # Reading metadata
//
// Image returns the current *metadata.Image, immutable and safe to keep.
// Subscribe delivers the newest image after every change (intermediate
// images may be skipped; diff against the last one handled). CaughtUp is
// the "replayed up to the controller's commit point" signal. MetadataLease
// says whether the image is known to be current right now: every heartbeat
// the controller answers vouches for it, until the session timeout passes
// or the process stalls (lease.go).
//
// # For the replica layer (broker/replica)
//
// For each partition whose Replicas hold this broker: lead it when
// Leader == own id, stamping batches with LeaderEpoch; otherwise follow
// Leader (NoLeader: wait). Replicas listed in Adding are catching up for
// a reassignment and are not in the ISR yet; a replica that is no longer
// listed is deleted. To shrink or expand the ISR the leader calls
//
//	node.AlterISR(ctx, metadata.AlterISR{Topic, Partition, Leader: self,
//	    LeaderEpoch, PartitionEpoch, ISR})
//
// quoting the epochs of the partition it last saw. It returns the
// committed partition (with its new PartitionEpoch), or
// ErrFencedLeaderEpoch / ErrNotLeader (the broker no longer leads: wait
// for the next image), ErrStalePartitionEpoch (re-read the image and
// propose again), ErrInvalidISR (the leader must stay in the ISR, members
// must be replicas, and fenced brokers cannot join). A reassignment
// completes when its added replicas are in the ISR; the controller does
// that in the same AlterISR. When the leader of a partition is fenced,
// the controller removes it from the ISR and elects another ISR member;
// the last ISR member stays in the ISR so it can lead again cleanly.
//
// A broker that crashes and starts again within its session timeout
// registers before the controller fenced the old process (each process
// registers with its own incarnation id). Its registration ends the old
// incarnation's standing in the same command, so no leadership of the old
// process goes on in its epoch: where the controller has heard from
// another ISR member, the broker leaves the ISR and that member leads in a
// new epoch; otherwise the broker keeps its place in new leader epochs
// (metadata's endIncarnation explains both).
//
// # Admin operations and forwarding
//
// CreateTopic, DeleteTopic, CreatePartitions, AlterConfig,
// ChangeReplicationFactor, EnsureOffsetsTopic, Drain, CancelDrain,
// RemoveBroker, Rebalance, ElectPreferred, ControlledShutdown and AlterISR work on any
// broker: off the controller they go to it over the peer transport
// (broker/peer) as the operations controller/<name>, which ServePeer
// registers on the broker's peer listener. A broker that receives one
// without being the controller passes it on once. Errors wrap the
// sentinels re-exported here, across brokers too; ErrorCode maps them to
// the codes and statuses of package api. Queries (Brokers, Broker,
// SafeToRestart) read the local image.
package cluster
