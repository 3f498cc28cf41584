package metadata

import (
	"slices"
	"sort"

	"github.com/kairolog/kairolog/broker/auth"
)

// NoLeader is the Leader of a partition that has none.
const NoLeader = -1

// Image is one version of the cluster metadata. An Image is never modified
// after it is published: Apply returns a new Image that shares unchanged
// brokers and topics with the old one. Readers therefore use an Image
// without locks, and must not modify anything reachable from it.
type Image struct {
	// Index is the raft log index of the command that produced this image.
	Index uint64 `json:"index"`
	// ClusterID is a uuid chosen by the first controller.
	ClusterID string `json:"cluster_id,omitempty"`
	// Brokers by id.
	Brokers map[int]*Broker `json:"brokers"`
	// Topics by name.
	Topics map[string]*Topic `json:"topics"`
	// NextProducerID is the first producer id not handed out yet: ids
	// below it belong to blocks given to brokers (AllocateIDs) and are
	// never given again.
	NextProducerID int64 `json:"next_producer_id,omitempty"`
	// Users by name: their SCRAM credentials and ACLs (broker/auth).
	Users map[string]*auth.User `json:"users,omitempty"`

	// owned marks the topics an Apply in progress has already copied, so
	// a command touching many partitions of one topic copies it once.
	owned map[string]bool
}

// Broker is a registered broker.
type Broker struct {
	ID          int    `json:"id"`
	HTTPAddress string `json:"http_address"`
	// PeerAddress is where the broker's peer listener takes calls from
	// other brokers (broker/peer).
	PeerAddress string `json:"peer_address,omitempty"`
	RaftAddress string `json:"raft_address"`
	// KafkaAddress is where Kafka clients reach the broker's Kafka
	// listener, as Kafka's Metadata names it (empty: none).
	KafkaAddress string `json:"kafka_address,omitempty"`
	Rack         string `json:"rack,omitempty"`
	// Voter reports whether the broker votes in the metadata quorum.
	Voter bool `json:"voter"`
	// Epoch is the raft index of the broker's latest registration. A
	// heartbeat carrying an older epoch comes from a previous incarnation.
	Epoch uint64 `json:"epoch"`
	// Incarnation identifies the process that registered last (a random
	// id per start; empty in registrations logged before it existed).
	Incarnation string `json:"incarnation,omitempty"`
	// Fenced brokers lead nothing and join no ISR.
	Fenced bool `json:"fenced"`
	// ShuttingDown is set by a controlled shutdown and cleared by the next
	// registration; heartbeats do not unfence such a broker.
	ShuttingDown bool `json:"shutting_down,omitempty"`
	// Draining brokers receive no new replicas; the controller moves theirs away.
	Draining bool `json:"draining,omitempty"`
}

// Topic is a topic and its partitions.
type Topic struct {
	Name     string `json:"name"`
	ID       string `json:"id"`
	Internal bool   `json:"internal,omitempty"`
	// Config holds only the overrides set on the topic.
	Config     map[string]string `json:"config,omitempty"`
	Partitions []*Partition      `json:"partitions"`
}

// Partition is the replica state of one partition.
//
// Invariants kept by Apply: Replicas is non-empty and distinct; ISR is
// non-empty and a subset of Replicas; Leader is NoLeader or a member of
// ISR and never a fenced broker; LeaderEpoch and PartitionEpoch never
// decrease; PartitionEpoch grows with every change of the partition.
type Partition struct {
	ID int `json:"partition"`
	// Replicas in preference order: the first is the preferred leader.
	// During a reassignment it holds the target replicas followed by the
	// ones being removed.
	Replicas []int `json:"replicas"`
	Leader   int   `json:"leader"`
	// LeaderEpoch grows whenever the leader changes (including to NoLeader).
	LeaderEpoch int   `json:"leader_epoch"`
	ISR         []int `json:"isr"`
	// PartitionEpoch grows with every change; AlterISR must quote it.
	PartitionEpoch int `json:"partition_epoch"`
	// Adding are target replicas still catching up; Removing are replicas
	// that leave once every adding replica is in the ISR.
	Adding   []int `json:"adding,omitempty"`
	Removing []int `json:"removing,omitempty"`
}

// NewImage returns the empty image a new cluster starts from.
func NewImage() *Image {
	return &Image{Brokers: map[int]*Broker{}, Topics: map[string]*Topic{}}
}

// Broker returns the broker with id, or nil.
func (img *Image) Broker(id int) *Broker { return img.Brokers[id] }

// Topic returns the named topic, or nil.
func (img *Image) Topic(name string) *Topic { return img.Topics[name] }

// Partition returns one partition, or nil.
func (img *Image) Partition(topic string, partition int) *Partition {
	t := img.Topics[topic]
	if t == nil || partition < 0 || partition >= len(t.Partitions) {
		return nil
	}
	return t.Partitions[partition]
}

// BrokerIDs returns the registered broker ids in ascending order.
func (img *Image) BrokerIDs() []int {
	ids := make([]int, 0, len(img.Brokers))
	for id := range img.Brokers {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// TopicNames returns the topic names in ascending order.
func (img *Image) TopicNames() []string {
	names := make([]string, 0, len(img.Topics))
	for n := range img.Topics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Live reports whether broker id is registered and not fenced.
func (img *Image) Live(id int) bool {
	b := img.Brokers[id]
	return b != nil && !b.Fenced
}

// ReplicationFactor is the number of target replicas of the topic's first
// partition (replicas being removed by a reassignment do not count).
func (t *Topic) ReplicationFactor() int {
	if len(t.Partitions) == 0 {
		return 0
	}
	return len(t.Partitions[0].Target())
}

// Reassigning reports whether a reassignment of p is in progress.
func (p *Partition) Reassigning() bool { return len(p.Adding) > 0 || len(p.Removing) > 0 }

// Target returns the replicas p will have once its reassignment completes.
func (p *Partition) Target() []int { return without(p.Replicas, p.Removing) }

// UnderReplicated reports whether the ISR is smaller than the replica set.
func (p *Partition) UnderReplicated() bool { return len(p.ISR) < len(p.Replicas) }

// InISR reports whether broker id is in the ISR.
func (p *Partition) InISR(id int) bool { return slices.Contains(p.ISR, id) }

// HasReplica reports whether broker id holds a replica of p.
func (p *Partition) HasReplica(id int) bool { return slices.Contains(p.Replicas, id) }

// clone copies the top-level maps so the result can be changed without
// touching img; brokers and topics stay shared until written through
// broker or topic.
func (img *Image) clone() *Image {
	next := &Image{
		Index:          img.Index,
		ClusterID:      img.ClusterID,
		Brokers:        make(map[int]*Broker, len(img.Brokers)),
		Topics:         make(map[string]*Topic, len(img.Topics)),
		NextProducerID: img.NextProducerID,
	}
	for id, b := range img.Brokers {
		next.Brokers[id] = b
	}
	for n, t := range img.Topics {
		next.Topics[n] = t
	}
	if len(img.Users) > 0 {
		next.Users = make(map[string]*auth.User, len(img.Users))
		for n, u := range img.Users {
			next.Users[n] = u
		}
	}
	next.owned = map[string]bool{}
	return next
}

// writableBroker replaces broker id in a cloned image by a private copy.
func (img *Image) writableBroker(id int) *Broker {
	b := *img.Brokers[id]
	img.Brokers[id] = &b
	return &b
}

// setPartition stores p in a cloned image, copying its topic first.
// Partitions are never changed in place: callers edit a copy from
// Partition.copy and hand it here.
func (img *Image) setPartition(topic string, p *Partition) {
	img.writableTopic(topic).Partitions[p.ID] = p
}

// writableTopic returns a private copy of the topic in a cloned image
// (its partition slice too, not the partitions).
func (img *Image) writableTopic(name string) *Topic {
	if img.owned[name] {
		return img.Topics[name]
	}
	old := img.Topics[name]
	t := *old
	t.Partitions = slices.Clone(old.Partitions)
	img.Topics[name] = &t
	img.owned[name] = true
	return &t
}

// copy returns a deep copy of p.
func (p *Partition) copy() *Partition {
	q := *p
	q.Replicas = slices.Clone(p.Replicas)
	q.ISR = slices.Clone(p.ISR)
	q.Adding = slices.Clone(p.Adding)
	q.Removing = slices.Clone(p.Removing)
	return &q
}

// equal reports whether two partitions hold the same replica state,
// epochs aside.
func (p *Partition) equal(q *Partition) bool {
	return p.Leader == q.Leader &&
		slices.Equal(p.Replicas, q.Replicas) &&
		slices.Equal(p.ISR, q.ISR) &&
		slices.Equal(p.Adding, q.Adding) &&
		slices.Equal(p.Removing, q.Removing)
}

// without returns the elements of a not in drop, keeping a's order.
func without(a, drop []int) []int {
	out := make([]int, 0, len(a))
	for _, x := range a {
		if !slices.Contains(drop, x) {
			out = append(out, x)
		}
	}
	return out
}

// intersect returns the elements of a that are also in b, in a's order.
func intersect(a, b []int) []int {
	out := make([]int, 0, len(a))
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
