package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/google/uuid"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// CreateTopicRequest asks for a user topic. Partitions and
// ReplicationFactor must be at least 1 (the server fills in its defaults).
type CreateTopicRequest struct {
	Name              string            `json:"name"`
	Partitions        int               `json:"partitions"`
	ReplicationFactor int               `json:"replication_factor"`
	Config            map[string]string `json:"config,omitempty"`
}

// TopicRequest names a topic. ID, when set, is the topic's ID as the
// caller saw it: the request is about that topic and no other of the same
// name (see deleteTopic).
type TopicRequest struct {
	Name string `json:"name"`
	ID   string `json:"id,omitempty"`
}

// CreatePartitionsRequest raises a topic's partition count to Partitions.
type CreatePartitionsRequest struct {
	Topic      string `json:"topic"`
	Partitions int    `json:"partitions"`
}

// AlterConfigRequest changes a topic's overrides: with Replace they
// become exactly Set (PUT); otherwise Set is merged in and Delete removed
// (PATCH).
type AlterConfigRequest struct {
	Topic   string            `json:"topic"`
	Set     map[string]string `json:"set,omitempty"`
	Delete  []string          `json:"delete,omitempty"`
	Replace bool              `json:"replace,omitempty"`
}

// ReplicationFactorRequest changes the replica count of a topic's partitions.
type ReplicationFactorRequest struct {
	Topic             string `json:"topic"`
	ReplicationFactor int    `json:"replication_factor"`
}

var (
	opCreateTopic  = defineOp("create-topic", (*Node).createTopic)
	opDeleteTopic  = defineOp("delete-topic", (*Node).deleteTopic)
	opPartitions   = defineOp("create-partitions", (*Node).createPartitions)
	opAlterConfig  = defineOp("alter-config", (*Node).alterConfig)
	opReplication  = defineOp("replication-factor", (*Node).changeReplicationFactor)
	opAlterISR     = defineOp("alter-isr", (*Node).alterISR)
	opOffsetsTopic = defineOp("offsets-topic", (*Node).ensureOffsetsTopic)
)

func (n *Node) createTopic(ctx context.Context, req CreateTopicRequest) (*metadata.Topic, error) {
	return n.newTopic(ctx, req, false)
}

// newTopic places and creates a topic. Placement happens here, before the
// proposal, so that Apply stays deterministic.
func (n *Node) newTopic(ctx context.Context, req CreateTopicRequest, internal bool) (*metadata.Topic, error) {
	if _, err := n.controller(); err != nil {
		return nil, err
	}
	if err := metadata.ValidateTopicName(req.Name, internal); err != nil {
		return nil, err
	}
	if err := metadata.ValidateConfig(req.Config); err != nil {
		return nil, err
	}
	n.adminMu.Lock()
	defer n.adminMu.Unlock()
	img := n.Image()
	if img.Topic(req.Name) != nil {
		return nil, fmt.Errorf("%w: %q", ErrTopicExists, req.Name)
	}
	assignments, err := metadata.NewPlanner(img).Place(req.Partitions, req.ReplicationFactor)
	if err != nil {
		return nil, err
	}
	_, err = n.apply(ctx, metadata.Command{Type: metadata.CmdCreateTopic, CreateTopic: &metadata.CreateTopic{
		Name: req.Name, ID: uuid.NewString(), Internal: internal, Config: req.Config, Assignments: assignments}})
	if err != nil {
		return nil, err
	}
	return n.Image().Topic(req.Name), nil
}

// ensureOffsetsTopic creates __consumer_offsets if it does not exist, with
// min(OffsetsTopicReplicas, live brokers) replicas; the controller raises
// that as brokers join.
func (n *Node) ensureOffsetsTopic(ctx context.Context, _ Empty) (*metadata.Topic, error) {
	if t := n.Image().Topic(OffsetsTopic); t != nil {
		return t, nil
	}
	eligible := metadata.NewPlanner(n.Image()).Eligible()
	t, err := n.newTopic(ctx, CreateTopicRequest{Name: OffsetsTopic, Partitions: n.cfg.OffsetsTopicPartitions,
		ReplicationFactor: min(n.cfg.OffsetsTopicReplicas, max(eligible, 1)), Config: n.cfg.OffsetsTopicConfig}, true)
	if err != nil && n.Image().Topic(OffsetsTopic) != nil {
		return n.Image().Topic(OffsetsTopic), nil // created concurrently
	}
	return t, err
}

func (n *Node) deleteTopic(ctx context.Context, req TopicRequest) (Empty, error) {
	if _, err := n.controller(); err != nil {
		return Empty{}, err
	}
	t := n.Image().Topic(req.Name)
	if err := metadata.RefuseInternal(t, "deleted"); err != nil {
		return Empty{}, err
	}
	// A delete of a topic ID that is gone has been done: most likely by
	// this very request, proposed by a controller that lost its leadership
	// before it could answer and sent here again. A topic of the same name
	// with another ID was created since and is not the one asked for.
	gone := req.ID != "" && (t == nil || t.ID != req.ID)
	if !gone {
		cmd := &metadata.DeleteTopic{Name: req.Name, ID: req.ID}
		if _, err := n.apply(ctx, metadata.Command{Type: metadata.CmdDeleteTopic, DeleteTopic: cmd}); err != nil {
			return Empty{}, err
		}
	}
	// Answered once no broker serves the topic any more (propagation.go).
	return Empty{}, n.awaitEveryBroker(ctx, n.Image().Index)
}

func (n *Node) createPartitions(ctx context.Context, req CreatePartitionsRequest) (*metadata.Topic, error) {
	if _, err := n.controller(); err != nil {
		return nil, err
	}
	n.adminMu.Lock()
	defer n.adminMu.Unlock()
	img := n.Image()
	t := img.Topic(req.Topic)
	if t == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTopic, req.Topic)
	}
	if err := metadata.RefuseInternal(t, "given more partitions"); err != nil {
		return nil, err
	}
	cmd, err := createPartitionsCommand(img, t, req)
	if err != nil || cmd == nil {
		return t, err
	}
	_, err = n.apply(ctx, metadata.Command{Type: metadata.CmdCreatePartitions, CreatePartitions: cmd})
	if errors.Is(err, metadata.ErrStalePartitionCount) {
		// The count moved since this controller read it: most likely this
		// very request, proposed by a controller that lost its leadership
		// before it could answer, committed after all and was sent here
		// again. Having the count asked for is success.
		if t := n.Image().Topic(req.Topic); t != nil && len(t.Partitions) == req.Partitions {
			return t, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return n.Image().Topic(req.Topic), nil
}

// createPartitionsCommand plans raising t to req.Partitions on img: nil
// when it has that many already. The command carries the count it was
// planned from, so that it adds partitions at most once however often it
// is proposed.
func createPartitionsCommand(img *metadata.Image, t *metadata.Topic, req CreatePartitionsRequest) (*metadata.CreatePartitions, error) {
	switch have := len(t.Partitions); {
	case req.Partitions < have:
		return nil, fmt.Errorf("%w: %q has %d partitions; the count cannot go down to %d",
			ErrInvalidPartitions, req.Topic, have, req.Partitions)
	case req.Partitions == have:
		return nil, nil
	}
	assignments, err := metadata.NewPlanner(img).Place(req.Partitions-len(t.Partitions), t.ReplicationFactor())
	if err != nil {
		return nil, err
	}
	return &metadata.CreatePartitions{Topic: req.Topic, FromPartitions: len(t.Partitions), Assignments: assignments}, nil
}

func (n *Node) alterConfig(ctx context.Context, req AlterConfigRequest) (map[string]string, error) {
	if _, err := n.controller(); err != nil {
		return nil, err
	}
	if err := metadata.RefuseInternal(n.Image().Topic(req.Topic), "reconfigured"); err != nil {
		return nil, err
	}
	// Only the values this change sets must meet today's bounds: a value
	// stored under an older version's bounds stays until it is changed.
	if err := metadata.ValidateConfig(req.Set); err != nil {
		return nil, err
	}
	_, err := n.apply(ctx, metadata.Command{Type: metadata.CmdAlterConfig, AlterConfig: &metadata.AlterConfig{
		Topic: req.Topic, Set: req.Set, Delete: req.Delete, Replace: req.Replace}})
	if err != nil {
		return nil, err
	}
	cfg := maps.Clone(n.Image().Topic(req.Topic).Config)
	if cfg == nil {
		cfg = map[string]string{}
	}
	return cfg, nil
}

func (n *Node) changeReplicationFactor(ctx context.Context, req ReplicationFactorRequest) (RebalanceResponse, error) {
	if _, err := n.controller(); err != nil {
		return RebalanceResponse{}, err
	}
	n.adminMu.Lock()
	defer n.adminMu.Unlock()
	// The controller alone sizes the internal topic (raiseOffsetsReplication):
	// a client that shrank it to one replica would put every group's state
	// on one broker.
	if err := metadata.RefuseInternal(n.Image().Topic(req.Topic), "given another replication factor"); err != nil {
		return RebalanceResponse{}, err
	}
	moves, err := metadata.NewPlanner(n.Image()).ReplicationFactorMoves(req.Topic, req.ReplicationFactor)
	if err != nil || len(moves) == 0 {
		return RebalanceResponse{}, err
	}
	_, err = n.apply(ctx, metadata.Command{Type: metadata.CmdReassign, Reassign: &metadata.Reassign{Moves: moves}})
	return RebalanceResponse{Moves: len(moves)}, err
}

func (n *Node) alterISR(ctx context.Context, req metadata.AlterISR) (*metadata.Partition, error) {
	if _, err := n.controller(); err != nil {
		return nil, err
	}
	if _, err := n.apply(ctx, metadata.Command{Type: metadata.CmdAlterISR, AlterISR: &req}); err != nil {
		return nil, err
	}
	return n.Image().Partition(req.Topic, req.Partition), nil
}
