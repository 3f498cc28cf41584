package kafka

import (
	"context"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/auth"
)

// Core is what the Kafka listener asks of the broker core, in the core's
// own vocabulary (broker/api); the broker's core implements it. Requests
// for partitions this broker does not lead, or groups it does not
// coordinate, are the core's to route: on the Kafka listener the context
// says to answer them NOT_LEADER (Kafka clients route by Metadata), on the
// gateway the core passes them on to the owner over the peer transport.
type Core interface {
	ID() int32
	ClusterID() string

	// Topology is the metadata as this broker has it.
	Topology(ctx context.Context) (api.Topology, error)
	// AutoCreateTopic creates a topic a client named before producing to
	// it, when the broker's auto.create.topics.enable allows it
	// (UNKNOWN_TOPIC otherwise).
	AutoCreateTopic(ctx context.Context, name string) error

	ProduceBatch(ctx context.Context, req api.ProduceBatchRequest) (api.ProduceBatchResult, error)
	FetchBatches(ctx context.Context, req api.FetchBatchesRequest) (api.FetchBatchesResult, error)
	ListOffset(ctx context.Context, req api.ListOffsetRequest) (api.ListOffsetResult, error)
	EpochEndOffset(ctx context.Context, req api.EpochEndOffsetRequest) (api.EpochEndOffsetResult, error)
	DeleteRecords(ctx context.Context, req api.DeleteRecordsRequest) (api.DeleteRecordsResult, error)

	// Topic administration, through the controller.
	CreateTopic(ctx context.Context, spec api.CreateTopicRequest) (*api.CreateTopicResult, error)
	DeleteTopic(ctx context.Context, name string) error
	AddPartitions(ctx context.Context, name string, partitions int32) error
	DescribeTopic(ctx context.Context, name string) (*api.TopicDescription, error)
	AlterTopicConfig(ctx context.Context, change api.TopicConfigChange) (map[string]string, error)
	// ElectPreferredLeaders moves leaderships back to preferred replicas:
	// the partitions named, answered in order, or with none every
	// partition, answering those it elected.
	ElectPreferredLeaders(ctx context.Context, partitions []api.TopicPartition) ([]api.LeaderElection, error)
	// ReassignPartitions starts, replaces or cancels reassignments,
	// answering each partition; Reassignments lists those in progress of
	// the topics named, or of every topic.
	ReassignPartitions(ctx context.Context, partitions []api.PartitionReassignment) ([]api.ReassignmentAnswer, error)
	Reassignments(ctx context.Context, topics []string) ([]api.Reassignment, error)
	// Settings are this broker's own broker-wide settings, and LogDir its
	// data directory with the replicas it holds.
	Settings(ctx context.Context) ([]api.BrokerSetting, error)
	LogDir(ctx context.Context) (api.LogDir, error)
	// Users are every user with its ACLs.
	Users(ctx context.Context) ([]*auth.User, error)

	// NewProducer gives an idempotent producer a new id, epoch 0.
	NewProducer(ctx context.Context) (api.Producer, error)

	// Consumer groups, on each group's coordinator.
	GroupCoordinator(ctx context.Context, group string) (int32, error)
	JoinGroup(ctx context.Context, req api.JoinGroupRequest) (api.JoinGroupResult, error)
	SyncGroup(ctx context.Context, req api.SyncGroupRequest) (api.SyncGroupResult, error)
	Heartbeat(ctx context.Context, req api.MemberGeneration) error
	LeaveGroup(ctx context.Context, req api.LeaveGroupRequest) error
	CommitOffsets(ctx context.Context, req api.CommitOffsetsRequest) error
	Offsets(ctx context.Context, req api.OffsetsRequest) ([]api.OffsetCommit, error)
	ListGroups(ctx context.Context) (api.GroupList, error)
	DescribeGroup(ctx context.Context, req api.DescribeGroupRequest) (api.GroupDescription, error)
	DeleteGroup(ctx context.Context, req api.DeleteGroupRequest) error
	DeleteOffsets(ctx context.Context, req api.DeleteOffsetsRequest) ([]api.DeletedOffset, error)
}

// Mode is which of a broker's two Kafka listeners a Server is.
type Mode int

const (
	// Direct is the Kafka listener: Metadata names every broker at its
	// advertised Kafka address, and a request for a partition this broker
	// does not lead is answered NOT_LEADER_OR_FOLLOWER, as in Kafka.
	Direct Mode = iota
	// Gateway is the port-forward-friendly listener: Metadata names this
	// broker, at the gateway's advertised address, as the leader of every
	// partition and the coordinator of every group, and the core passes
	// each request on to the broker that owns it.
	Gateway
)
