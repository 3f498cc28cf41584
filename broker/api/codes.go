package api

import "net/http"

// Error codes. Every error reply, on the client API and between brokers,
// carries one of these in its "code" field; docs/api.md lists the public
// ones with their status.
const (
	CodeInvalidJSON              = "INVALID_JSON"
	CodeInvalidArgument          = "INVALID_ARGUMENT"
	CodeMissingField             = "MISSING_FIELD"
	CodeInvalidConfig            = "INVALID_CONFIG"
	CodeInvalidPartitions        = "INVALID_PARTITIONS"
	CodeInvalidReplicationFactor = "INVALID_REPLICATION_FACTOR"
	CodeNoActiveMembers          = "NO_ACTIVE_MEMBERS"

	CodeNotFound         = "NOT_FOUND"
	CodeUnknownTopic     = "UNKNOWN_TOPIC"
	CodeUnknownPartition = "UNKNOWN_PARTITION"
	CodeUnknownGroup     = "UNKNOWN_GROUP"
	CodeUnknownMemberID  = "UNKNOWN_MEMBER_ID"
	CodeUnknownBroker    = "UNKNOWN_BROKER"

	CodeInternalTopic = "INTERNAL_TOPIC"

	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"

	CodeTopicAlreadyExists     = "TOPIC_ALREADY_EXISTS"
	CodeIllegalGeneration      = "ILLEGAL_GENERATION"
	CodeRebalanceInProgress    = "REBALANCE_IN_PROGRESS"
	CodeNonEmptyGroup          = "NON_EMPTY_GROUP"
	CodeGroupSubscribedToTopic = "GROUP_SUBSCRIBED_TO_TOPIC"
	CodeReassignmentInfeasible = "REASSIGNMENT_INFEASIBLE"
	CodeBrokerNotEmpty         = "BROKER_NOT_EMPTY"
	CodeVoterNotReplaceable    = "VOTER_NOT_REPLACEABLE"
	CodeReassignmentInProgress = "REASSIGNMENT_IN_PROGRESS"
	// A cancellation of a partition reassignment where none is in
	// progress (Kafka's NO_REASSIGNMENT_IN_PROGRESS).
	CodeNoReassignmentInProgress = "NO_REASSIGNMENT_IN_PROGRESS"
	CodeTopicDeletionInProgress  = "TOPIC_DELETION_IN_PROGRESS"
	CodeBodyTooLarge             = "BODY_TOO_LARGE"
	CodeBodyTimeout              = "BODY_TIMEOUT"
	CodeRecordTooLarge           = "RECORD_TOO_LARGE"
	CodeUnsupportedMediaType     = "UNSUPPORTED_MEDIA_TYPE"
	CodeOffsetOutOfRange         = "OFFSET_OUT_OF_RANGE"
	// CodeOffsetNotAvailable: a partition's latest offset was asked of a
	// leader whose high watermark has not yet reached the start of its own
	// leader epoch, so it may be below records already acknowledged
	// (Kafka's OFFSET_NOT_AVAILABLE, KIP-207); retriable.
	CodeOffsetNotAvailable = "OFFSET_NOT_AVAILABLE"
	CodeNotReady           = "NOT_READY"
	CodeNotEnoughReplicas  = "NOT_ENOUGH_REPLICAS"
	// CodeNotEnoughReplicasAfterAppend: acks=all, the records were
	// written and committed (the high watermark covers them), but the ISR
	// fell below min.insync.replicas while the producer waited, so they are
	// on fewer replicas than it asked for (Kafka's
	// NOT_ENOUGH_REPLICAS_AFTER_APPEND, code 20). Unlike NOT_ENOUGH_REPLICAS
	// (nothing written), sending them again stores them twice.
	CodeNotEnoughReplicasAfterAppend = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
	CodeLeaderNotAvailable           = "LEADER_NOT_AVAILABLE"
	CodeCoordinatorNotAvailable      = "COORDINATOR_NOT_AVAILABLE"
	CodeNotController                = "NOT_CONTROLLER"
	CodeStorageError                 = "STORAGE_ERROR"
	CodeBrokerBusy                   = "BROKER_BUSY"
	CodeRequestTimedOut              = "REQUEST_TIMED_OUT"
	CodeInternal                     = "INTERNAL"
	CodeBrokerUnavailable            = "BROKER_UNAVAILABLE"
	// Idempotent producers (Kafka's codes of the same names): a batch of
	// a producer's that does not continue its sequence in the partition
	// and is none of its last five; a batch of an older producer epoch
	// than the partition has seen.
	CodeOutOfOrderSequence   = "OUT_OF_ORDER_SEQUENCE_NUMBER"
	CodeInvalidProducerEpoch = "INVALID_PRODUCER_EPOCH"
	// A producer's encoded batch that fails its CRC or does not decode
	// (Kafka's CORRUPT_MESSAGE), or that decodes but is not one the log
	// takes (INVALID_RECORD: transactional, control, offset deltas).
	CodeCorruptMessage = "CORRUPT_MESSAGE"
	CodeInvalidRecord  = "INVALID_RECORD"
	// A request its principal may not make (Kafka's codes of the same
	// names): the ACLs allow it nothing on the topic, the group or the
	// cluster it names. A request without credentials, or with bad ones,
	// is UNAUTHENTICATED.
	CodeTopicAuthorizationFailed   = "TOPIC_AUTHORIZATION_FAILED"
	CodeGroupAuthorizationFailed   = "GROUP_AUTHORIZATION_FAILED"
	CodeClusterAuthorizationFailed = "CLUSTER_AUTHORIZATION_FAILED"
	// A member that shares no protocol, or not the protocol type, with the
	// members of its group (Kafka's code of the same name): a Kafka
	// consumer joining a generation of the HTTP API's consumers, or one
	// whose assignors none of the others support.
	CodeInconsistentGroupProtocol = "INCONSISTENT_GROUP_PROTOCOL"
	// A preferred-leader election's answers for one partition (Kafka's
	// codes of the same names): its preferred replica leads already; its
	// preferred replica cannot lead now (not alive, not in sync, or
	// leaving), and the leader stays.
	CodeElectionNotNeeded           = "ELECTION_NOT_NEEDED"
	CodePreferredLeaderNotAvailable = "PREFERRED_LEADER_NOT_AVAILABLE"
)

// Codes that only travel between brokers: the fencing and placement
// answers of the controller and of a partition leader, and the peer
// listener's refusal of a caller without the cluster secret. A client of
// the public API never sees them (the broker maps them to a public code
// first), except UNAUTHENTICATED, which a client port that authenticates
// answers too.
const (
	CodeNotLeader           = "NOT_LEADER"
	CodeFencedLeaderEpoch   = "FENCED_LEADER_EPOCH"
	CodeUnknownLeaderEpoch  = "UNKNOWN_LEADER_EPOCH"
	CodeInconsistentTopicID = "INCONSISTENT_TOPIC_ID"
	CodeStalePartitionEpoch = "STALE_PARTITION_EPOCH"
	CodeStaleBrokerEpoch    = "STALE_BROKER_EPOCH"
	CodeInvalidISR          = "INVALID_ISR"
	CodeNotReplica          = "NOT_REPLICA"
	CodeUnauthenticated     = "UNAUTHENTICATED"

	// A follower's fetch session that the leader does not have (it
	// restarted, or a newer session replaced it), or a request of it out
	// of order: the follower starts a new session (Kafka's KIP-227).
	CodeFetchSessionIDNotFound   = "FETCH_SESSION_ID_NOT_FOUND"
	CodeInvalidFetchSessionEpoch = "INVALID_FETCH_SESSION_EPOCH"
)

// statuses is the one table of HTTP statuses: a code has the same status
// on every listener and in every package.
var statuses = map[string]int{
	CodeInvalidJSON:              http.StatusBadRequest,
	CodeInvalidArgument:          http.StatusBadRequest,
	CodeMissingField:             http.StatusBadRequest,
	CodeInvalidConfig:            http.StatusBadRequest,
	CodeInvalidPartitions:        http.StatusBadRequest,
	CodeInvalidReplicationFactor: http.StatusBadRequest,
	CodeNoActiveMembers:          http.StatusBadRequest,
	CodeInvalidISR:               http.StatusBadRequest,
	CodeCorruptMessage:           http.StatusBadRequest,
	CodeInvalidRecord:            http.StatusBadRequest,

	CodeUnauthenticated:            http.StatusUnauthorized,
	CodeInternalTopic:              http.StatusForbidden,
	CodeTopicAuthorizationFailed:   http.StatusForbidden,
	CodeGroupAuthorizationFailed:   http.StatusForbidden,
	CodeClusterAuthorizationFailed: http.StatusForbidden,

	CodeNotFound:         http.StatusNotFound,
	CodeUnknownTopic:     http.StatusNotFound,
	CodeUnknownPartition: http.StatusNotFound,
	CodeUnknownGroup:     http.StatusNotFound,
	CodeUnknownMemberID:  http.StatusNotFound,
	CodeUnknownBroker:    http.StatusNotFound,

	CodeMethodNotAllowed: http.StatusMethodNotAllowed,

	CodeTopicAlreadyExists:       http.StatusConflict,
	CodeIllegalGeneration:        http.StatusConflict,
	CodeRebalanceInProgress:      http.StatusConflict,
	CodeNonEmptyGroup:            http.StatusConflict,
	CodeGroupSubscribedToTopic:   http.StatusConflict,
	CodeReassignmentInfeasible:   http.StatusConflict,
	CodeBrokerNotEmpty:           http.StatusConflict,
	CodeVoterNotReplaceable:      http.StatusConflict,
	CodeReassignmentInProgress:   http.StatusConflict,
	CodeNoReassignmentInProgress: http.StatusConflict,
	CodeFencedLeaderEpoch:        http.StatusConflict,
	CodeUnknownLeaderEpoch:       http.StatusConflict,
	CodeInconsistentTopicID:      http.StatusConflict,
	CodeStalePartitionEpoch:      http.StatusConflict,
	CodeStaleBrokerEpoch:         http.StatusConflict,
	CodeNotReplica:               http.StatusConflict,
	CodeOutOfOrderSequence:       http.StatusConflict,
	CodeInvalidProducerEpoch:     http.StatusConflict,

	CodeFetchSessionIDNotFound:    http.StatusConflict,
	CodeInvalidFetchSessionEpoch:  http.StatusConflict,
	CodeInconsistentGroupProtocol: http.StatusConflict,
	CodeElectionNotNeeded:         http.StatusConflict,

	CodeBodyTimeout:          http.StatusRequestTimeout,
	CodeBodyTooLarge:         http.StatusRequestEntityTooLarge,
	CodeRecordTooLarge:       http.StatusRequestEntityTooLarge,
	CodeUnsupportedMediaType: http.StatusUnsupportedMediaType,
	CodeOffsetOutOfRange:     http.StatusRequestedRangeNotSatisfiable,
	// The request reached a broker that does not lead the partition.
	CodeNotLeader: http.StatusMisdirectedRequest,

	CodeNotReady:                     http.StatusServiceUnavailable,
	CodeNotEnoughReplicas:            http.StatusServiceUnavailable,
	CodeNotEnoughReplicasAfterAppend: http.StatusServiceUnavailable,
	CodeLeaderNotAvailable:           http.StatusServiceUnavailable,
	CodeCoordinatorNotAvailable:      http.StatusServiceUnavailable,
	CodeNotController:                http.StatusServiceUnavailable,
	CodeStorageError:                 http.StatusServiceUnavailable,
	CodeBrokerBusy:                   http.StatusServiceUnavailable,
	CodeRequestTimedOut:              http.StatusServiceUnavailable,
	CodeBrokerUnavailable:            http.StatusServiceUnavailable,
	CodeOffsetNotAvailable:           http.StatusServiceUnavailable,
	CodePreferredLeaderNotAvailable:  http.StatusServiceUnavailable,

	CodeInternal: http.StatusInternalServerError,
}

// StatusForCode is the HTTP status of an error code; unknown codes are
// internal errors.
func StatusForCode(code string) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// KnownCode reports whether code is in the table.
func KnownCode(code string) bool {
	_, ok := statuses[code]
	return ok
}
