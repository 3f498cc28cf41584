package group

import "errors"

// Errors the coordinator returns, wrapped with detail; test them with
// errors.Is. The comment of each says the API code the server answers with.
var (
	// ErrInvalidArgument: 400 INVALID_ARGUMENT (empty id, bad timeout …).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrUnknownGroup: 404 UNKNOWN_GROUP.
	ErrUnknownGroup = errors.New("unknown group")
	// ErrUnknownMember: 404 UNKNOWN_MEMBER_ID.
	ErrUnknownMember = errors.New("unknown member id")
	// ErrIllegalGeneration: 409 ILLEGAL_GENERATION; the client must rejoin.
	ErrIllegalGeneration = errors.New("illegal generation")
	// ErrRebalanceInProgress: 409 REBALANCE_IN_PROGRESS; the client must rejoin.
	ErrRebalanceInProgress = errors.New("rebalance in progress")
	// ErrInconsistentGroupProtocol: 409 INCONSISTENT_GROUP_PROTOCOL; the
	// member shares no protocol, or not the protocol type, with the
	// members of its group.
	ErrInconsistentGroupProtocol = errors.New("inconsistent group protocol")
	// ErrNonEmptyGroup: 409 NON_EMPTY_GROUP; the group still has members.
	ErrNonEmptyGroup = errors.New("group has active members")
	// ErrGroupSubscribedToTopic: 409 GROUP_SUBSCRIBED_TO_TOPIC; a member
	// of the group consumes the topic whose offset was to be deleted.
	ErrGroupSubscribedToTopic = errors.New("group is subscribed to the topic")
	// ErrNoActiveMembers: 400 NO_ACTIVE_MEMBERS; nobody to assign partitions to.
	ErrNoActiveMembers = errors.New("no active members")
	// ErrUnknownTopic: 404 UNKNOWN_TOPIC.
	ErrUnknownTopic = errors.New("unknown topic")
	// ErrUnknownPartition: 404 UNKNOWN_PARTITION.
	ErrUnknownPartition = errors.New("unknown partition")
	// ErrCoordinatorNotAvailable: 503 COORDINATOR_NOT_AVAILABLE; the
	// coordinator was closed (this broker no longer leads the group's
	// journal partition).
	ErrCoordinatorNotAvailable = errors.New("coordinator not available")
	// ErrInvalidRecord is returned by Replay for a record it cannot decode.
	ErrInvalidRecord = errors.New("invalid group record")
)
