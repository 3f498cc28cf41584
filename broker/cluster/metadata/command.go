package metadata

import (
	"encoding/json"
	"fmt"

	"github.com/kairolog/kairolog/broker/auth"
)

// CommandType names a metadata command.
type CommandType string

// Command types. Every command is validated by Apply against the image it
// lands on, so a command decided on a stale image fails instead of
// corrupting state.
const (
	CmdInitCluster      CommandType = "init_cluster"
	CmdRegisterBroker   CommandType = "register_broker"
	CmdFenceBroker      CommandType = "fence_broker"
	CmdUnfenceBroker    CommandType = "unfence_broker"
	CmdControlledStop   CommandType = "controlled_shutdown"
	CmdCreateTopic      CommandType = "create_topic"
	CmdDeleteTopic      CommandType = "delete_topic"
	CmdCreatePartitions CommandType = "create_partitions"
	CmdAlterConfig      CommandType = "alter_config"
	CmdAlterISR         CommandType = "alter_isr"
	CmdElectLeaders     CommandType = "elect_leaders"
	CmdReassign         CommandType = "reassign"
	CmdDrain            CommandType = "drain"
	CmdCancelDrain      CommandType = "cancel_drain"
	CmdRemoveBroker     CommandType = "remove_broker"
	CmdAllocateIDs      CommandType = "allocate_producer_ids"
	CmdPutUser          CommandType = "put_user"
	CmdDeleteUser       CommandType = "delete_user"
)

// Command is one entry of the metadata log: its Type and the matching
// payload field.
type Command struct {
	Type CommandType `json:"type"`

	InitCluster      *InitCluster      `json:"init_cluster,omitempty"`
	RegisterBroker   *RegisterBroker   `json:"register_broker,omitempty"`
	Broker           *BrokerRef        `json:"broker,omitempty"`
	CreateTopic      *CreateTopic      `json:"create_topic,omitempty"`
	DeleteTopic      *DeleteTopic      `json:"delete_topic,omitempty"`
	CreatePartitions *CreatePartitions `json:"create_partitions,omitempty"`
	AlterConfig      *AlterConfig      `json:"alter_config,omitempty"`
	AlterISR         *AlterISR         `json:"alter_isr,omitempty"`
	ElectLeaders     *ElectLeaders     `json:"elect_leaders,omitempty"`
	Reassign         *Reassign         `json:"reassign,omitempty"`
	AllocateIDs      *AllocateIDs      `json:"allocate_producer_ids,omitempty"`
	PutUser          *auth.User        `json:"put_user,omitempty"`
	DeleteUser       *UserRef          `json:"delete_user,omitempty"`
}

// UserRef names a user.
type UserRef struct {
	Name string `json:"name"`
}

// InitCluster names the cluster once; later ones change nothing.
type InitCluster struct {
	ClusterID string `json:"cluster_id"`
}

// RegisterBroker adds a broker or records its restart: it unfences the
// broker, clears a controlled shutdown and sets the registration epoch.
type RegisterBroker struct {
	ID          int    `json:"id"`
	HTTPAddress string `json:"http_address"`
	PeerAddress string `json:"peer_address,omitempty"`
	RaftAddress string `json:"raft_address"`
	// KafkaAddress is the broker's advertised Kafka listener.
	KafkaAddress string `json:"kafka_address,omitempty"`
	Rack         string `json:"rack,omitempty"`
	Voter        bool   `json:"voter"`
	// Incarnation is the registering process's id. A registration from
	// another incarnation than the unfenced one the image holds ends the
	// old incarnation's leaderships and ISR memberships (see
	// endIncarnation).
	Incarnation string `json:"incarnation,omitempty"`
	// Heard are the other brokers the controller had heard from within
	// their session when it proposed the registration: only they take over
	// from an ended incarnation.
	Heard []int `json:"heard,omitempty"`
}

// BrokerRef is the payload of the commands that name one broker:
// fence, unfence, controlled shutdown, drain, cancel drain, remove.
type BrokerRef struct {
	ID int `json:"id"`
}

// CreateTopic creates a topic with the replica placement the controller
// chose (one replica list per partition; first replica = preferred leader).
type CreateTopic struct {
	Name        string            `json:"name"`
	ID          string            `json:"id"`
	Internal    bool              `json:"internal,omitempty"`
	Config      map[string]string `json:"config,omitempty"`
	Assignments [][]int           `json:"assignments"`
}

// DeleteTopic removes a topic.
type DeleteTopic struct {
	Name string `json:"name"`
	// ID, when set, is the ID of the topic to delete: the command deletes
	// nothing once the name belongs to another topic (or to none).
	// Commands logged before topic IDs carry none.
	ID string `json:"id,omitempty"`
}

// CreatePartitions appends partitions with the given placement.
// FromPartitions is the partition count the placement was planned from;
// the command applies only while the topic still has that many, so a
// command proposed again after a controller failover (the first proposal
// committed after all) adds nothing twice. Commands logged before the
// field existed have 0 and apply as they are.
type CreatePartitions struct {
	Topic          string  `json:"topic"`
	FromPartitions int     `json:"from_partitions,omitempty"`
	Assignments    [][]int `json:"assignments"`
}

// AlterConfig changes a topic's overrides. With Replace the overrides
// become exactly Set; otherwise Set is merged in and Delete removed.
type AlterConfig struct {
	Topic   string            `json:"topic"`
	Set     map[string]string `json:"set,omitempty"`
	Delete  []string          `json:"delete,omitempty"`
	Replace bool              `json:"replace,omitempty"`
}

// AlterISR is the partition leader's request to change the ISR. It names
// the leader and the epochs it saw, and fails with ErrFencedLeaderEpoch or
// ErrStalePartitionEpoch when the partition moved on since.
type AlterISR struct {
	Topic          string `json:"topic"`
	Partition      int    `json:"partition"`
	Leader         int    `json:"leader"`
	LeaderEpoch    int    `json:"leader_epoch"`
	PartitionEpoch int    `json:"partition_epoch"`
	ISR            []int  `json:"isr"`
}

// ElectLeaders elects a leader for every listed partition that has none
// (all partitions when the list is empty). With Preferred it also moves
// leadership to the first replica wherever that replica is live, in the
// ISR and not draining.
type ElectLeaders struct {
	Preferred  bool             `json:"preferred,omitempty"`
	Partitions []TopicPartition `json:"partitions,omitempty"`
}

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
}

// Reassign starts moving partitions to new replica sets. All moves are
// validated before any is applied. A move whose target equals the current
// replicas cancels an in-progress reassignment of that partition when the
// ISR allows it.
type Reassign struct {
	Moves []Move `json:"moves"`
}

// Move is the target replica list of one partition.
type Move struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Target    []int  `json:"target"`
}

// AllocateIDs hands out the block of producer ids [From, From+Count) to a
// broker, which gives them to idempotent producers one by one. From must
// be the image's NextProducerID, so that a block is handed out once
// however often the command is proposed (ErrStaleProducerIDs otherwise).
type AllocateIDs struct {
	Broker int   `json:"broker"`
	From   int64 `json:"from"`
	Count  int64 `json:"count"`
}

// maxProducerIDBlock bounds one allocation.
const maxProducerIDBlock = 1 << 20

// Encode returns the log entry for c.
func (c Command) Encode() ([]byte, error) { return json.Marshal(c) }

// DecodeCommand parses a log entry written by Encode.
func DecodeCommand(b []byte) (Command, error) {
	var c Command
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%w: %v", ErrInvalidCommand, err)
	}
	return c, nil
}
