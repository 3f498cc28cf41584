package client

// CreateTopicRequest is the body of POST /topics. Zero Partitions and
// ReplicationFactor mean the broker's defaults.
type CreateTopicRequest struct {
	Name              string            `json:"name"`
	Partitions        int32             `json:"partitions,omitempty"`
	ReplicationFactor int16             `json:"replication_factor,omitempty"`
	Config            map[string]string `json:"config,omitempty"`
}

// CreateTopicResponse is the 201 reply of POST /topics.
type CreateTopicResponse struct {
	Status            string `json:"status"`
	Name              string `json:"name"`
	TopicID           string `json:"topic_id"`
	Partitions        int32  `json:"partitions"`
	ReplicationFactor int16  `json:"replication_factor"`
}

// TopicList is the reply of GET /topics.
type TopicList struct {
	Topics []string `json:"topics"`
}

// TopicDescription is the reply of GET /topics/{name} and an element of
// Metadata.Topics.
type TopicDescription struct {
	Name              string                 `json:"name"`
	TopicID           string                 `json:"topic_id"`
	Internal          bool                   `json:"internal"`
	PartitionCount    int32                  `json:"partition_count"`
	ReplicationFactor int16                  `json:"replication_factor"`
	Config            map[string]string      `json:"config"`
	Partitions        []PartitionDescription `json:"partitions"`
}

// PartitionDescription is one partition of a topic as its leader sees it.
type PartitionDescription struct {
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	Adding          []int32 `json:"adding,omitempty"`
	Removing        []int32 `json:"removing,omitempty"`
	HighWatermark   int64   `json:"high_watermark"`
	LogEndOffset    int64   `json:"log_end_offset"`
	LogStartOffset  int64   `json:"log_start_offset"`
	SizeBytes       int64   `json:"size_bytes"`
	UnderReplicated bool    `json:"under_replicated"`
}

// TopicStatus is the reply of DELETE /topics/{name}.
type TopicStatus struct {
	Status string `json:"status"`
	Name   string `json:"name"`
}

// PartitionsResponse is the reply of POST /topics/{name}/partitions.
type PartitionsResponse struct {
	Status     string `json:"status"`
	Name       string `json:"name"`
	Partitions int32  `json:"partitions"`
}

// TopicConfigResponse is the reply of PUT and PATCH /topics/{name}/config.
type TopicConfigResponse struct {
	Status string            `json:"status"`
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
}

// ReplicationFactorResponse is the reply of POST /topics/{name}/replication-factor.
type ReplicationFactorResponse struct {
	Status            string `json:"status"`
	Name              string `json:"name"`
	ReplicationFactor int16  `json:"replication_factor"`
}
