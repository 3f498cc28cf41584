package server

import (
	"context"
	"time"

	"github.com/kairolog/kairolog/broker"
	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/memory"
	"github.com/prometheus/client_golang/prometheus"
)

// Broker is what the HTTP layer needs from the broker: *broker.Broker in
// production. Every method returns *client.Error for a failure a client
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
	CreateTopic(ctx context.Context, spec broker.TopicSpec) (*client.CreateTopicResponse, error)
	ListTopics(ctx context.Context, internal bool) ([]string, error)
	DescribeTopic(ctx context.Context, name string) (*client.TopicDescription, error)
	DeleteTopic(ctx context.Context, name string) error
	AddPartitions(ctx context.Context, name string, partitions int32) error
	AlterTopicConfig(ctx context.Context, name string, change broker.ConfigChange) (map[string]string, error)
	SetReplicationFactor(ctx context.Context, name string, rf int16) error
}

// RecordAPI is the data path.
type RecordAPI interface {
	Produce(ctx context.Context, args broker.ProduceArgs) ([]broker.Position, error)
	Fetch(ctx context.Context, args broker.FetchArgs) (*broker.FetchResult, error)
}

// MemberAPI is the original single-node group API: membership with
// last-seen times, saved assignments and plain offset commits.
type MemberAPI interface {
	JoinMember(ctx context.Context, group, member string) error
	LeaveMember(ctx context.Context, group, member string) error
	HeartbeatMember(ctx context.Context, group, member string) error
	Members(ctx context.Context, group string) ([]client.Member, error)
	StaleMembers(ctx context.Context, group string, timeout time.Duration) ([]client.Member, error)
	RemoveStaleMembers(ctx context.Context, group string, timeout time.Duration) ([]client.Member, error)
	Assign(ctx context.Context, topic string, members []string) ([]client.Assignment, error)
	Rebalance(ctx context.Context, group, topic string) ([]client.Assignment, error)
	CleanupAndRebalance(ctx context.Context, group, topic string, timeout time.Duration) (removed []client.Member, assignments []client.Assignment, err error)
	SavedAssignments(ctx context.Context, group, topic string) (found bool, assignments []client.Assignment, err error)
	DeleteSavedAssignments(ctx context.Context, group, topic string) error
	CommitOffset(ctx context.Context, req client.CommitOffsetRequest) error
	Offset(ctx context.Context, group, topic string, partition int32) (offset int64, found bool, err error)
}

// GroupAPI is the generation protocol and group administration.
type GroupAPI interface {
	JoinGroup(ctx context.Context, group string, req client.JoinGroupRequest) (*client.JoinGroupResponse, error)
	SyncGroup(ctx context.Context, group, member string, generation int32) (*client.SyncGroupResponse, error)
	Heartbeat(ctx context.Context, group, member string, generation int32) error
	LeaveGroup(ctx context.Context, group, member string) error
	CommitOffsets(ctx context.Context, group string, req client.CommitOffsetsRequest) error
	GroupOffsets(ctx context.Context, group string) ([]client.OffsetCommit, error)
	ListGroups(ctx context.Context) (*client.GroupList, error)
	DescribeGroup(ctx context.Context, group string, topics []string) (*client.GroupDescription, error)
	SetGroupConfig(ctx context.Context, group string, cfg client.GroupConfig) (*client.GroupConfig, error)
	ResetOffsets(ctx context.Context, group string, req client.ResetOffsetsRequest) ([]client.PartitionOffset, error)
	DeleteGroup(ctx context.Context, group string) error
}

// ClusterAPI is cluster administration.
type ClusterAPI interface {
	Metadata(ctx context.Context) (*client.Metadata, error)
	Brokers(ctx context.Context) ([]client.BrokerInfo, error)
	BrokerInfo(ctx context.Context, id int32) (*client.BrokerInfo, error)
	SafeToRestart(ctx context.Context, id int32) (*client.SafeToRestart, error)
	Drain(ctx context.Context, id int32) (remaining int, err error)
	CancelDrain(ctx context.Context, id int32) error
	DemoteVoter(ctx context.Context, id int32) error
	RemoveBroker(ctx context.Context, id int32) error
	RebalanceCluster(ctx context.Context) (moves int, err error)
}
