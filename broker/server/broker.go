package server

import (
	"context"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/memory"
	"github.com/prometheus/client_golang/prometheus"
)

// Broker is what the HTTP layer needs from the broker: *broker.Broker in
// production. Every method returns *api.Error for a failure a client
// caused or can retry; any other error is a bug and answers 500.
type Broker interface {
	Ready() error
	// AwaitMetadata returns nil once the broker's metadata has caught up,
	// waiting a bounded time for it, and a 503 NOT_READY otherwise.
	AwaitMetadata(ctx context.Context) error
	// Memory is the broker-wide budget request bodies are charged to.
	Memory() memory.Budget
	// Collector exposes partition, log and group gauges to /metrics.
	Collector() prometheus.Collector

	TopicAPI
	RecordAPI
	MemberAPI
	GroupAPI
	ClusterAPI
}

// TopicAPI is topic administration.
type TopicAPI interface {
	CreateTopic(ctx context.Context, req api.CreateTopicRequest) (*api.CreateTopicResult, error)
	ListTopics(ctx context.Context, internal bool) ([]string, error)
	DescribeTopic(ctx context.Context, name string) (*api.TopicDescription, error)
	DeleteTopic(ctx context.Context, name string) error
	AddPartitions(ctx context.Context, name string, partitions int32) error
	AlterTopicConfig(ctx context.Context, change api.TopicConfigChange) (map[string]string, error)
	SetReplicationFactor(ctx context.Context, name string, rf int16) error
}

// RecordAPI is the data path.
type RecordAPI interface {
	Produce(ctx context.Context, req api.ProduceRequest) ([]api.Position, error)
	Fetch(ctx context.Context, req api.FetchRequest) (*api.FetchResult, error)
}

// MemberAPI is what only the original single-node group API asks.
type MemberAPI interface {
	SeenMember(ctx context.Context, req api.SeenMember) error
	StaleMembers(ctx context.Context, req api.StaleMembersRequest) ([]api.Member, error)
	Assign(ctx context.Context, req api.AssignRequest) ([]api.Assignment, error)
	SaveAssignment(ctx context.Context, req api.SaveAssignmentRequest) (api.SaveAssignmentResult, error)
	SavedAssignment(ctx context.Context, req api.GroupTopic) (api.SavedAssignment, error)
	DeleteSavedAssignment(ctx context.Context, req api.GroupTopic) error
}

// GroupAPI is the generation protocol and group administration.
type GroupAPI interface {
	JoinGroup(ctx context.Context, req api.JoinGroupRequest) (api.JoinGroupResult, error)
	SyncGroup(ctx context.Context, req api.MemberGeneration) (api.SyncGroupResult, error)
	Heartbeat(ctx context.Context, req api.MemberGeneration) error
	LeaveGroup(ctx context.Context, req api.LeaveGroupRequest) error
	CommitOffsets(ctx context.Context, req api.CommitOffsetsRequest) error
	Offsets(ctx context.Context, req api.OffsetsRequest) ([]api.OffsetCommit, error)
	ListGroups(ctx context.Context) (api.GroupList, error)
	DescribeGroup(ctx context.Context, req api.DescribeGroupRequest) (api.GroupDescription, error)
	SetGroupConfig(ctx context.Context, cfg api.GroupConfig) (api.GroupConfig, error)
	ResetOffsets(ctx context.Context, req api.ResetOffsetsRequest) ([]api.PartitionOffset, error)
	DeleteGroup(ctx context.Context, req api.DeleteGroupRequest) error
}

// ClusterAPI is cluster administration.
type ClusterAPI interface {
	Metadata(ctx context.Context) (*api.Metadata, error)
	Brokers(ctx context.Context) ([]api.BrokerInfo, error)
	BrokerInfo(ctx context.Context, id int32) (*api.BrokerInfo, error)
	SafeToRestart(ctx context.Context, id int32) (*api.SafeToRestart, error)
	Drain(ctx context.Context, id int32) (remaining int, err error)
	CancelDrain(ctx context.Context, id int32) error
	DemoteVoter(ctx context.Context, id int32) error
	RemoveBroker(ctx context.Context, id int32) error
	RebalanceCluster(ctx context.Context) (moves int, err error)
}
