package client

import "time"

// Member is a group member as the original group API shows it. LastSeen is
// nil where the reply carries only ids (removed_members).
type Member struct {
	ID       string     `json:"id"`
	LastSeen *time.Time `json:"last_seen,omitempty"`
}

// MemberRequest is the body of POST /groups/join, /groups/leave and
// /groups/heartbeat.
type MemberRequest struct {
	Group    string `json:"group"`
	MemberID string `json:"member_id"`
}

// MembersResponse is the reply of GET /groups/members.
type MembersResponse struct {
	Group   string   `json:"group"`
	Members []Member `json:"members"`
}

// StaleMembersResponse is the reply of GET /groups/stale.
type StaleMembersResponse struct {
	Group     string   `json:"group"`
	TimeoutMs int64    `json:"timeout_ms"`
	Members   []Member `json:"members"`
}

// RemoveStaleRequest is the body of POST /groups/remove-stale.
type RemoveStaleRequest struct {
	Group     string `json:"group"`
	TimeoutMs int64  `json:"timeout_ms"`
}

// RemoveStaleResponse is the reply of POST /groups/remove-stale.
type RemoveStaleResponse struct {
	Group          string   `json:"group"`
	TimeoutMs      int64    `json:"timeout_ms"`
	RemovedMembers []Member `json:"removed_members"`
}

// TopicPartitions is a topic and some of its partitions.
type TopicPartitions struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// Assignment is the partitions given to one member.
type Assignment struct {
	MemberID string            `json:"member_id"`
	Topics   []TopicPartitions `json:"topics"`
}

// AssignRequest is the body of POST /groups/assign.
type AssignRequest struct {
	Topic   string   `json:"topic"`
	Members []Member `json:"members"`
}

// AssignResponse is the reply of POST /groups/assign.
type AssignResponse struct {
	Assignments []Assignment `json:"assignments"`
}

// GroupTopicRequest is the body of POST /groups/rebalance.
type GroupTopicRequest struct {
	Group string `json:"group"`
	Topic string `json:"topic"`
}

// RebalanceResponse is the reply of POST /groups/rebalance.
type RebalanceResponse struct {
	Group       string       `json:"group"`
	Assignments []Assignment `json:"assignments"`
}

// CleanupRebalanceRequest is the body of POST /groups/cleanup-and-rebalance.
type CleanupRebalanceRequest struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	TimeoutMs int64  `json:"timeout_ms"`
}

// CleanupRebalanceResponse is the reply of POST /groups/cleanup-and-rebalance.
type CleanupRebalanceResponse struct {
	Group          string       `json:"group"`
	Topic          string       `json:"topic"`
	TimeoutMs      int64        `json:"timeout_ms"`
	RemovedMembers []Member     `json:"removed_members"`
	Assignments    []Assignment `json:"assignments"`
}

// SavedAssignments is the reply of GET /groups/assignments.
type SavedAssignments struct {
	Group       string       `json:"group"`
	Topic       string       `json:"topic"`
	Found       bool         `json:"found"`
	Assignments []Assignment `json:"assignments"`
}

// DeletedAssignments is the reply of DELETE /groups/assignments.
type DeletedAssignments struct {
	Status string `json:"status"`
	Group  string `json:"group"`
	Topic  string `json:"topic"`
}

// CommitOffsetRequest is the body of POST /offsets/commit. MemberID and
// Generation, when given, fence the commit like POST /groups/{g}/offsets.
type CommitOffsetRequest struct {
	Group      string `json:"group"`
	Topic      string `json:"topic"`
	Partition  int32  `json:"partition"`
	Offset     int64  `json:"offset"`
	MemberID   string `json:"member_id,omitempty"`
	Generation *int32 `json:"generation,omitempty"`
}

// OffsetLookup is the reply of GET /offsets.
type OffsetLookup struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Found     bool   `json:"found"`
}

// StatusResponse is a reply that only says what happened.
type StatusResponse struct {
	Status string `json:"status"`
}
