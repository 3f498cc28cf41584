package api

import "time"

// The vocabulary of the original single-node group API: members that are
// registered and seen (not part of a generation), members gone stale by a
// timeout, and assignments computed for one topic and saved per group and
// topic.

// Member is a group member as the original group API shows it. LastSeen is
// nil where a reply carries only ids (removed_members).
type Member struct {
	ID       string     `json:"id"`
	LastSeen *time.Time `json:"last_seen,omitempty"`
}

// Assignment is the partitions given to one member.
type Assignment struct {
	MemberID string            `json:"member_id"`
	Topics   []TopicPartitions `json:"topics"`
}

// SeenMember records that a member of a group was seen now, registering it
// when it is missing. Refresh moves an existing member's last-seen time (a
// heartbeat); without it an existing member is left as it is (a join).
type SeenMember struct {
	Group    string `json:"group"`
	MemberID string `json:"member_id"`
	Refresh  bool   `json:"refresh,omitempty"`
}

// StaleMembersRequest finds the members of a group not seen for Timeout
// (now − last seen > Timeout), and removes them when Remove is set.
type StaleMembersRequest struct {
	Group   string        `json:"group"`
	Timeout time.Duration `json:"timeout"`
	Remove  bool          `json:"remove,omitempty"`
}

// AssignRequest assigns the partitions of Topic over Members with the
// range strategy, saving nothing.
type AssignRequest struct {
	Topic   string   `json:"topic"`
	Members []string `json:"members"`
}

// SaveAssignmentRequest assigns the partitions of Topic over the group's
// members and saves the result for the group and topic. With RemoveStale
// the members not seen for StaleTimeout are removed first.
type SaveAssignmentRequest struct {
	Group        string        `json:"group"`
	Topic        string        `json:"topic"`
	RemoveStale  bool          `json:"remove_stale,omitempty"`
	StaleTimeout time.Duration `json:"stale_timeout,omitempty"`
}

// SaveAssignmentResult is the saved assignment and the members removed
// before it was computed.
type SaveAssignmentResult struct {
	Removed     []Member     `json:"removed"`
	Assignments []Assignment `json:"assignments"`
}

// GroupTopic names the saved assignment of a group and a topic.
type GroupTopic struct {
	Group string `json:"group"`
	Topic string `json:"topic"`
}

// SavedAssignment is the saved assignment of a group and a topic; Found is
// false (and Assignments empty) when there is none.
type SavedAssignment struct {
	Found       bool         `json:"found"`
	Assignments []Assignment `json:"assignments"`
}
