package replica

import (
	"context"
	"slices"
	"strconv"
)

// NoLeader is the leader id of a partition that has no leader.
const NoLeader int32 = -1

// PartitionState is the controller's committed record of one partition, as
// the metadata image holds it.
type PartitionState struct {
	Topic string
	// TopicID tells this topic from an earlier one of the same name that
	// was deleted (KIP-516): a replica directory that holds another id is
	// stale and is deleted, never reused. "" (tests) skips the check.
	TopicID   string
	Partition int32
	// Replicas is the assignment, preferred leader first.
	Replicas []int32
	// Leader is the broker that leads the partition, NoLeader if none.
	Leader int32
	// LeaderEpoch grows by one at each leader election.
	LeaderEpoch int32
	// ISR is the committed in-sync replica set.
	ISR []int32
	// PartitionEpoch grows at every change of the partition's state (leader
	// or ISR); AlterISR is validated against it.
	PartitionEpoch int32
	// Config holds the topic's config overrides ("min.insync.replicas",
	// "retention.ms", ...), string values as in the API.
	Config map[string]string
}

// minInsyncReplicas reads min.insync.replicas, defaulting to 1 as Kafka.
func (s PartitionState) minInsyncReplicas() int {
	if v, ok := s.Config["min.insync.replicas"]; ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 1 {
			return n
		}
	}
	return 1
}

func (s PartitionState) hosts(broker int32) bool { return slices.Contains(s.Replicas, broker) }

// Metadata is the read side of the cluster metadata this package needs: the
// current partition states, broker addresses and a change notification.
// The cluster package's metadata image satisfies it through a thin adapter.
type Metadata interface {
	// Partitions returns every partition of the current image and the
	// image's index (it grows with every image). caughtUp is false until
	// this broker has replayed the metadata log up to the controller's
	// commit point: until then the manager opens and serves what it finds,
	// but deletes nothing.
	Partitions() (states []PartitionState, index uint64, caughtUp bool)
	// Lease reports whether this broker's metadata is known to be current
	// right now — it cannot be after the process was stopped or stalled,
	// or when it has not reached the controller for a session timeout —
	// and, if so, the image index the manager must have acted on for its
	// own state to be as current. A leader appends and serves consumers
	// only under the lease.
	Lease() (index uint64, ok bool)
	// BrokerAddress returns the host:port of a broker's peer listener.
	BrokerAddress(id int32) (string, bool)
	// Subscribe returns a channel that receives a value after the image
	// changes (notifications may be coalesced: on receipt, read the whole
	// image again) and a function that ends the subscription.
	Subscribe() (<-chan struct{}, func())
}

// AlterISRRequest is a partition leader's proposal of a new ISR.
type AlterISRRequest struct {
	Topic          string
	Partition      int32
	LeaderID       int32
	LeaderEpoch    int32
	PartitionEpoch int32
	ISR            []int32
}

// ISRChanger submits ISR changes to the controller. AlterISR returns once the
// change is committed to the metadata log (with the new PartitionEpoch), or
// an error if the controller rejected it (stale leader or partition epoch,
// unknown partition) or could not be reached.
type ISRChanger interface {
	AlterISR(ctx context.Context, req AlterISRRequest) (PartitionState, error)
}
