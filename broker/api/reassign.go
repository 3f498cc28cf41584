package api

// Partition reassignments on request (Kafka's AlterPartitionReassignments
// and ListPartitionReassignments, kafka-reassign-partitions): a partition
// given new replicas adds them, and its other replicas leave once the
// added ones are in sync; the first replica given is its preferred
// leader. GET /topics/{name} shows the progress (adding, removing).

// PartitionReassignment asks for one partition's replicas to become
// Replicas, or with Cancel for its reassignment in progress to be undone.
type PartitionReassignment struct {
	// Topic is the partition's topic; over HTTP the path names it.
	Topic     string  `json:"-"`
	Partition int32   `json:"partition"`
	Replicas  []int32 `json:"replicas,omitempty"`
	Cancel    bool    `json:"cancel,omitempty"`
	// KeepReplicationFactor refuses replicas of another count than the
	// partition's (INVALID_REPLICATION_FACTOR), as a Kafka client asks
	// with AllowReplicationFactorChange false (KIP-860).
	KeepReplicationFactor bool `json:"-"`
}

// ReassignmentAnswer is one partition's answer: its replicas afterwards
// (the target first, then those leaving), or the error that left it as
// it was.
type ReassignmentAnswer struct {
	Topic     string  `json:"-"`
	Partition int32   `json:"partition"`
	Replicas  []int32 `json:"replicas,omitempty"`
	Adding    []int32 `json:"adding,omitempty"`
	Removing  []int32 `json:"removing,omitempty"`
	Error     string  `json:"error,omitempty"`
	Code      string  `json:"code,omitempty"`
}

// Reassignment is a partition being reassigned: its replicas now, those
// being added and those leaving once the added ones are in sync.
type Reassignment struct {
	Topic     string
	Partition int32
	Replicas  []int32
	Adding    []int32
	Removing  []int32
}
