package client

import "time"

// JoinGroupRequest is the body of POST /groups/{g}/join. An empty MemberID
// asks the coordinator for a new one.
type JoinGroupRequest struct {
	MemberID           string   `json:"member_id"`
	Topics             []string `json:"topics"`
	SessionTimeoutMs   int64    `json:"session_timeout_ms,omitempty"`
	RebalanceTimeoutMs int64    `json:"rebalance_timeout_ms,omitempty"`
	ClientID           string   `json:"client_id,omitempty"`
}

// JoinGroupResponse is the reply of POST /groups/{g}/join.
type JoinGroupResponse struct {
	Group      string         `json:"group"`
	MemberID   string         `json:"member_id"`
	Generation int32          `json:"generation"`
	Leader     string         `json:"leader"`
	Members    []JoinedMember `json:"members"`
}

// JoinedMember is a member of a generation and the topics it subscribes to.
type JoinedMember struct {
	ID     string   `json:"id"`
	Topics []string `json:"topics"`
}

// GenerationRequest is the body of POST /groups/{g}/sync and /heartbeat.
type GenerationRequest struct {
	MemberID   string `json:"member_id"`
	Generation int32  `json:"generation"`
}

// SyncGroupResponse is the reply of POST /groups/{g}/sync.
type SyncGroupResponse struct {
	Group      string            `json:"group"`
	MemberID   string            `json:"member_id"`
	Generation int32             `json:"generation"`
	Assignment []TopicPartitions `json:"assignment"`
}

// LeaveGroupRequest is the body of POST /groups/{g}/leave.
type LeaveGroupRequest struct {
	MemberID string `json:"member_id"`
}

// OffsetCommit is one committed position.
type OffsetCommit struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Metadata  string `json:"metadata"`
}

// CommitOffsetsRequest is the body of POST /groups/{g}/offsets.
type CommitOffsetsRequest struct {
	MemberID   string         `json:"member_id"`
	Generation int32          `json:"generation"`
	Offsets    []OffsetCommit `json:"offsets"`
}

// GroupOffsets is the reply of GET /groups/{g}/offsets.
type GroupOffsets struct {
	Group   string         `json:"group"`
	Offsets []OffsetCommit `json:"offsets"`
}

// GroupList is the reply of GET /groups. Partial is set when some brokers'
// groups are missing: UnavailableBrokers did not answer, or their group
// coordinators were still loading.
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

// GroupDescription is the reply of GET /groups/{g}.
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
}

// GroupMember is one member of a described group.
type GroupMember struct {
	ID         string            `json:"id"`
	ClientID   string            `json:"client_id"`
	LastSeen   time.Time         `json:"last_seen"`
	Topics     []string          `json:"topics"`
	Assignment []TopicPartitions `json:"assignment"`
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

// GroupConfig is the body and reply of PUT /groups/{g}/config.
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

// ResetOffsetsRequest is the body of POST /groups/{g}/reset-offsets.
type ResetOffsetsRequest struct {
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

// ResetOffsetsResponse is the reply of POST /groups/{g}/reset-offsets.
type ResetOffsetsResponse struct {
	Group   string            `json:"group"`
	Offsets []PartitionOffset `json:"offsets"`
}

// GroupStatus is the reply of DELETE /groups/{g}.
type GroupStatus struct {
	Status string `json:"status"`
	Group  string `json:"group"`
}
