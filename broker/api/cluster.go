package api

// Broker states.
const (
	BrokerAlive    = "alive"
	BrokerFenced   = "fenced"
	BrokerDraining = "draining"
	BrokerDrained  = "drained"
)

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
