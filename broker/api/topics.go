package api

// CreateTopicRequest asks for a new topic (the body of POST /topics). Zero
// Partitions or ReplicationFactor take the broker defaults (num.partitions,
// default.replication.factor).
type CreateTopicRequest struct {
	Name              string            `json:"name"`
	Partitions        int32             `json:"partitions,omitempty"`
	ReplicationFactor int16             `json:"replication_factor,omitempty"`
	Config            map[string]string `json:"config,omitempty"`
}

// CreateTopicResult is the topic a CreateTopicRequest made.
type CreateTopicResult struct {
	Name              string `json:"name"`
	TopicID           string `json:"topic_id"`
	Partitions        int32  `json:"partitions"`
	ReplicationFactor int16  `json:"replication_factor"`
}

// TopicConfigChange edits a topic's overrides. With Replace, Set becomes the
// whole set of overrides (PUT); otherwise Set is merged in and Remove
// deleted (PATCH).
type TopicConfigChange struct {
	Topic   string
	Set     map[string]string
	Remove  []string
	Replace bool
}

// TopicDescription is one topic: its placement from the metadata, its
// partitions' offsets and sizes from their leaders.
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
// The offsets and SizeBytes are -1 when the leader did not answer.
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
