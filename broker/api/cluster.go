package api

// Broker states.
const (
	BrokerAlive    = "alive"
	BrokerFenced   = "fenced"
	BrokerDraining = "draining"
	BrokerDrained  = "drained"
)

// BrokerSetting is one of the settings a broker runs with
// (docs/configuration.md).
type BrokerSetting struct {
	Name string `json:"name"`
	// Value is nil for a setting left unset.
	Value *string `json:"value"`
	// Given says the broker's properties set it; otherwise it is the
	// default.
	Given bool   `json:"given"`
	Doc   string `json:"doc"`
}

// LogDir is a broker's data directory and the replicas it holds there.
type LogDir struct {
	Path string `json:"path"`
	// TotalBytes and UsableBytes are the size of its file system and what
	// is free there; -1 when unknown.
	TotalBytes  int64         `json:"total_bytes"`
	UsableBytes int64         `json:"usable_bytes"`
	Replicas    []ReplicaSize `json:"replicas"`
}

// ReplicaSize is one hosted replica's bytes on disk, and how far its log
// end is below the high watermark it knows.
type ReplicaSize struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	SizeBytes int64  `json:"size_bytes"`
	OffsetLag int64  `json:"offset_lag"`
}

// Metadata describes the cluster: its brokers, its controller and every
// topic.
type Metadata struct {
	ClusterID    string             `json:"cluster_id"`
	ControllerID int32              `json:"controller_id"`
	Brokers      []BrokerInfo       `json:"brokers"`
	Topics       []TopicDescription `json:"topics"`
}

// BrokerInfo is one broker of the cluster.
type BrokerInfo struct {
	ID              int32  `json:"id"`
	Address         string `json:"address"`
	Rack            string `json:"rack"`
	State           string `json:"state"`
	Voter           bool   `json:"voter"`
	Partitions      int    `json:"partitions"`
	Leaders         int    `json:"leaders"`
	UnderReplicated int    `json:"under_replicated"`
	InSync          bool   `json:"in_sync"`
}

// SafeToRestart says whether stopping a broker now keeps every partition at
// min.insync.replicas, and if not, which partitions it would take below.
type SafeToRestart struct {
	Broker   int32               `json:"broker"`
	Safe     bool                `json:"safe"`
	Reasons  []string            `json:"reasons"`
	Blocking []BlockingPartition `json:"blocking"`
}

// BlockingPartition is a partition that would drop below min.insync.replicas.
type BlockingPartition struct {
	Topic             string  `json:"topic"`
	Partition         int32   `json:"partition"`
	ISR               []int32 `json:"isr"`
	MinInsyncReplicas int     `json:"min_insync_replicas"`
}

// Topology is the cluster as this broker's metadata has it, asking no
// other broker: what a client needs to route requests (Kafka's Metadata).
type Topology struct {
	ClusterID    string           `json:"cluster_id"`
	ControllerID int32            `json:"controller_id"`
	Brokers      []BrokerEndpoint `json:"brokers"`
	Topics       []TopicPlacement `json:"topics"`
}

// BrokerEndpoint is a broker and where clients reach it.
type BrokerEndpoint struct {
	ID int32 `json:"id"`
	// KafkaAddress is the broker's advertised Kafka listener, "" when it
	// has none.
	KafkaAddress string `json:"kafka_address"`
	Rack         string `json:"rack"`
	// Fenced brokers lead nothing and are left out of clients' routing.
	Fenced bool `json:"fenced"`
}

// TopicPlacement is a topic and where its partitions are.
type TopicPlacement struct {
	Name       string               `json:"name"`
	TopicID    string               `json:"topic_id"`
	Internal   bool                 `json:"internal"`
	Partitions []PartitionPlacement `json:"partitions"`
}

// PartitionPlacement is one partition's leader (NoLeader when it has none),
// leader epoch, replicas and in-sync replicas.
type PartitionPlacement struct {
	Partition   int32   `json:"partition"`
	Leader      int32   `json:"leader"`
	LeaderEpoch int32   `json:"leader_epoch"`
	Replicas    []int32 `json:"replicas"`
	ISR         []int32 `json:"isr"`
	// Offline are replicas on fenced brokers.
	Offline []int32 `json:"offline,omitempty"`
}

// NoLeader is a partition's Leader while it has none.
const NoLeader int32 = -1
