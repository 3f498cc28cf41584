package client

// Broker states.
const (
	BrokerAlive    = "alive"
	BrokerFenced   = "fenced"
	BrokerDraining = "draining"
	BrokerDrained  = "drained"
)

// Metadata is the reply of GET /metadata.
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

// BrokerList is the reply of GET /brokers.
type BrokerList struct {
	Brokers []BrokerInfo `json:"brokers"`
}

// SafeToRestart is the reply of GET /brokers/{id}/safe-to-restart.
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

// DrainResponse is the 202 reply of POST /brokers/{id}/drain.
type DrainResponse struct {
	Status            string `json:"status"`
	Broker            int32  `json:"broker"`
	RemainingReplicas int    `json:"remaining_replicas"`
}

// BrokerStatus is the reply of cancel-drain and DELETE /brokers/{id}.
type BrokerStatus struct {
	Status string `json:"status"`
	Broker int32  `json:"broker"`
}

// ClusterRebalanceResponse is the 202 reply of POST /cluster/rebalance.
type ClusterRebalanceResponse struct {
	Status string `json:"status"`
	Moves  int    `json:"moves"`
}
