package api

import "time"

// The consumer-group vocabulary: the generation protocol (join, sync,
// heartbeat, leave, fenced commits), committed offsets and group
// administration. A request names its group in Group; over HTTP the group
// is in the path, so the JSON leaves it out when empty.

// NoGeneration is the Generation of an unfenced commit (no member, no
// generation), as the original POST /offsets/commit and Kafka's
// standalone consumers send.
const NoGeneration int32 = -1

// ConsumerProtocolType is the protocol type of Kafka's consumers, whose
// protocol metadata (subscription) and assignments the Kafka front door
// decodes into topics and partitions.
const ConsumerProtocolType = "consumer"

// JoinGroupRequest asks to join a group's next generation. An empty
// MemberID asks the coordinator for a new one.
//
// A member of the HTTP API names its subscription in Topics, and the
// coordinator assigns their partitions with the group's strategy. A Kafka
// member names a ProtocolType and the Protocols it supports, preferred
// first (Kafka's classic protocol with client-side assignors): the
// coordinator picks a protocol every member supports, the generation's
// leader assigns with it and sends the assignments in its SyncGroup, and
// the coordinator hands each member its own. The two kinds do not share a
// generation (INCONSISTENT_GROUP_PROTOCOL).
type JoinGroupRequest struct {
	Group              string          `json:"group,omitempty"`
	MemberID           string          `json:"member_id"`
	Topics             []string        `json:"topics"`
	SessionTimeoutMs   int64           `json:"session_timeout_ms,omitempty"`
	RebalanceTimeoutMs int64           `json:"rebalance_timeout_ms,omitempty"`
	ClientID           string          `json:"client_id,omitempty"`
	ProtocolType       string          `json:"protocol_type,omitempty"`
	Protocols          []GroupProtocol `json:"protocols,omitempty"`
}

// GroupProtocol is a protocol a member supports: its name, the member's
// metadata for it (opaque to the coordinator), and the topics that
// metadata subscribes to when the front door could read them (the
// consumer protocol), which describing the group shows.
type GroupProtocol struct {
	Name     string   `json:"name"`
	Metadata []byte   `json:"metadata,omitempty"`
	Topics   []string `json:"topics,omitempty"`
}

// JoinGroupResult is the generation a member joined; in a group whose
// members assign, also the protocol chosen for it.
type JoinGroupResult struct {
	Group        string         `json:"group"`
	MemberID     string         `json:"member_id"`
	Generation   int32          `json:"generation"`
	Leader       string         `json:"leader"`
	Members      []JoinedMember `json:"members"`
	ProtocolType string         `json:"protocol_type,omitempty"`
	Protocol     string         `json:"protocol,omitempty"`
}

// JoinedMember is a member of a generation and the topics it subscribes
// to; in a group whose members assign, also its metadata for the chosen
// protocol, which the leader's assignor reads.
type JoinedMember struct {
	ID       string   `json:"id"`
	Topics   []string `json:"topics"`
	Metadata []byte   `json:"metadata,omitempty"`
}

// MemberGeneration names a member of a generation: the request of sync and
// heartbeat.
type MemberGeneration struct {
	Group      string `json:"group,omitempty"`
	MemberID   string `json:"member_id"`
	Generation int32  `json:"generation"`
}

// SyncGroupRequest asks for a member's assignment in its generation. In
// a group whose members assign, the leader sends every member's
// assignment, and ProtocolType and Protocol, when set, must be the
// group's.
type SyncGroupRequest struct {
	Group        string             `json:"group,omitempty"`
	MemberID     string             `json:"member_id"`
	Generation   int32              `json:"generation"`
	ProtocolType string             `json:"protocol_type,omitempty"`
	Protocol     string             `json:"protocol,omitempty"`
	Assignments  []MemberAssignment `json:"assignments,omitempty"`
}

// MemberAssignment is what a leader assigns one member: the bytes the
// member gets (opaque to the coordinator), and the partitions they give
// when the front door could read them (the consumer protocol).
type MemberAssignment struct {
	MemberID   string            `json:"member_id"`
	Assignment []byte            `json:"assignment,omitempty"`
	Topics     []TopicPartitions `json:"topics,omitempty"`
}

// SyncGroupResult is a member's assignment in its generation. In a group
// whose members assign, MemberAssignment is the bytes the leader assigned
// it and Assignment what they give, as far as the front door read them.
type SyncGroupResult struct {
	Group            string            `json:"group"`
	MemberID         string            `json:"member_id"`
	Generation       int32             `json:"generation"`
	Assignment       []TopicPartitions `json:"assignment"`
	ProtocolType     string            `json:"protocol_type,omitempty"`
	Protocol         string            `json:"protocol,omitempty"`
	MemberAssignment []byte            `json:"member_assignment,omitempty"`
}

// LeaveGroupRequest takes a member out of its group.
type LeaveGroupRequest struct {
	Group    string `json:"group,omitempty"`
	MemberID string `json:"member_id"`
}

// TopicPartitions is a topic and some of its partitions.
type TopicPartitions struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// OffsetCommit is one committed position.
type OffsetCommit struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Metadata  string `json:"metadata"`
}

// CommitOffsetsRequest commits offsets for a group, all or none. A member
// and its generation fence the commit; with MemberID empty and Generation
// NoGeneration it is unfenced.
type CommitOffsetsRequest struct {
	Group      string         `json:"group,omitempty"`
	MemberID   string         `json:"member_id"`
	Generation int32          `json:"generation"`
	Offsets    []OffsetCommit `json:"offsets"`
}

// OffsetsRequest reads a group's committed offsets: those of Partitions,
// or every one when Partitions is empty.
type OffsetsRequest struct {
	Group      string           `json:"group"`
	Partitions []TopicPartition `json:"partitions,omitempty"`
}

// TopicPartition names one partition of one topic.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// GroupList is every coordinator's groups. Partial is set when some
// brokers' groups are missing: UnavailableBrokers did not answer, or their
// group coordinators were still loading.
type GroupList struct {
	Groups             []GroupSummary `json:"groups"`
	Partial            bool           `json:"partial,omitempty"`
	UnavailableBrokers []int32        `json:"unavailable_brokers,omitempty"`
}

// GroupSummary is one group of GroupList.
type GroupSummary struct {
	Group      string `json:"group"`
	State      string `json:"state"`
	Generation int32  `json:"generation"`
	Members    int    `json:"members"`
}

// DescribeGroupRequest describes a group; Topics adds every partition of
// those topics to the offsets, committed or not. WithoutLag leaves the
// offsets out, and with them the reads of every partition's high
// watermark from its leader.
type DescribeGroupRequest struct {
	Group      string   `json:"group"`
	Topics     []string `json:"topics,omitempty"`
	WithoutLag bool     `json:"without_lag,omitempty"`
}

// DeleteGroupRequest deletes an empty group.
type DeleteGroupRequest struct {
	Group string `json:"group"`
}

// DeleteOffsetsRequest deletes a group's committed offsets of some
// partitions (Kafka's OffsetDelete).
type DeleteOffsetsRequest struct {
	Group      string           `json:"group"`
	Partitions []TopicPartition `json:"partitions"`
}

// DeletedOffset is one partition of a DeleteOffsetsRequest: Err is nil
// when its offset is gone (or none was committed), and
// GROUP_SUBSCRIBED_TO_TOPIC when a member of the group consumes its topic.
type DeletedOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Err       *Error `json:"error,omitempty"`
}

// OffsetDeletion is one partition of POST /groups/{g}/delete-offsets's
// answer: deleted, or the error and code that kept its offset.
type OffsetDeletion struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Deleted   bool   `json:"deleted"`
	Error     string `json:"error,omitempty"`
	Code      string `json:"code,omitempty"`
}

// GroupDescription is a group's state, members, committed offsets and lag.
type GroupDescription struct {
	Group              string         `json:"group"`
	State              string         `json:"state"`
	Generation         int32          `json:"generation"`
	AssignmentStrategy string         `json:"assignment_strategy"`
	SessionTimeoutMs   int64          `json:"session_timeout_ms"`
	Leader             string         `json:"leader"`
	Members            []GroupMember  `json:"members"`
	Offsets            []PartitionLag `json:"offsets"`
	TotalLag           int64          `json:"total_lag"`
	// ProtocolType and Protocol are set for a group whose members assign
	// (Kafka consumers): its protocol type and the protocol its current
	// generation chose, whose assignor the leader ran.
	ProtocolType string `json:"protocol_type,omitempty"`
	Protocol     string `json:"protocol,omitempty"`
}

// GroupMember is one member of a described group. In a group whose
// members assign, ProtocolMetadata is its metadata for the chosen
// protocol and MemberAssignment the bytes the leader assigned it (Topics
// and Assignment are what they give, as far as the broker can read them).
type GroupMember struct {
	ID               string            `json:"id"`
	ClientID         string            `json:"client_id"`
	LastSeen         time.Time         `json:"last_seen"`
	Topics           []string          `json:"topics"`
	Assignment       []TopicPartitions `json:"assignment"`
	ProtocolMetadata []byte            `json:"protocol_metadata,omitempty"`
	MemberAssignment []byte            `json:"member_assignment,omitempty"`
}

// PartitionLag is a partition's committed offset and how far it trails.
// CommittedOffset is -1 when nothing is committed.
type PartitionLag struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	CommittedOffset int64  `json:"committed_offset"`
	HighWatermark   int64  `json:"high_watermark"`
	LogEndOffset    int64  `json:"log_end_offset"`
	Lag             int64  `json:"lag"`
	Metadata        string `json:"metadata"`
}

// GroupConfig is a group's own settings; a zero field leaves that setting
// as it is.
type GroupConfig struct {
	Group              string `json:"group,omitempty"`
	SessionTimeoutMs   int64  `json:"session_timeout_ms,omitempty"`
	AssignmentStrategy string `json:"assignment_strategy,omitempty"`
}

// Reset targets of ResetOffsetsRequest.To.
const (
	ResetEarliest  = "earliest"
	ResetLatest    = "latest"
	ResetOffset    = "offset"
	ResetTimestamp = "timestamp"
)

// ResetOffsetsRequest moves an empty group's committed offsets.
type ResetOffsetsRequest struct {
	Group     string   `json:"group,omitempty"`
	To        string   `json:"to"`
	Offset    *int64   `json:"offset,omitempty"`
	Timestamp *int64   `json:"timestamp,omitempty"`
	Topics    []string `json:"topics"`
}

// PartitionOffset is a partition and an offset.
type PartitionOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}
