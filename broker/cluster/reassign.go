package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// Partition reassignments on request: Kafka's AlterPartitionReassignments
// and ListPartitionReassignments (kafka-reassign-partitions). A partition
// given new replicas takes them as a drain or a replication-factor change
// does: the added replicas catch up and join the ISR, and only then do
// the others leave; the first replica given is the preferred leader.

// PartitionReassignment asks for one partition's replicas to become
// Replicas, in preference order, or with Cancel for the reassignment in
// progress to be undone (the added replicas leave, the others stay).
type PartitionReassignment struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Replicas  []int  `json:"replicas,omitempty"`
	Cancel    bool   `json:"cancel,omitempty"`
	// KeepReplicationFactor refuses Replicas of another count than the
	// partition's (ErrInvalidReplicationFactor).
	KeepReplicationFactor bool `json:"keep_replication_factor,omitempty"`
}

// ReassignRequest is the partitions of one AlterPartitionReassignments.
type ReassignRequest struct {
	Partitions []PartitionReassignment `json:"partitions"`
}

// ReassignmentAnswer is one partition's answer: without Code, the
// reassignment started (or was undone, or there was nothing to move) and
// Replicas, Adding and Removing are the partition's afterwards; otherwise
// the API code and message of why it did not.
type ReassignmentAnswer struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Replicas  []int  `json:"replicas,omitempty"`
	Adding    []int  `json:"adding,omitempty"`
	Removing  []int  `json:"removing,omitempty"`
	Code      string `json:"code,omitempty"`
	Message   string `json:"message,omitempty"`
}

var opReassign = defineOp("reassign-partitions", (*Node).reassignPartitions)

// ReassignPartitions starts, replaces or cancels the reassignments asked
// for, one metadata command per partition, and answers each partition in
// the order asked: a partition that cannot move (an unknown one, the
// internal topic's, replicas on unknown brokers or listed twice, no
// in-sync replica left) keeps its replicas without holding back the rest.
func (n *Node) ReassignPartitions(ctx context.Context, partitions []PartitionReassignment) ([]ReassignmentAnswer, error) {
	return opReassign.call(n, ctx, ReassignRequest{Partitions: partitions})
}

func (n *Node) reassignPartitions(ctx context.Context, req ReassignRequest) ([]ReassignmentAnswer, error) {
	if _, err := n.controller(); err != nil {
		return nil, err
	}
	n.adminMu.Lock()
	defer n.adminMu.Unlock()
	out := make([]ReassignmentAnswer, len(req.Partitions))
	for i, r := range req.Partitions {
		out[i] = ReassignmentAnswer{Topic: r.Topic, Partition: r.Partition}
		err := n.reassignOne(ctx, r)
		switch {
		case err == nil:
			if p := n.Image().Partition(r.Topic, r.Partition); p != nil {
				out[i].Replicas, out[i].Adding, out[i].Removing = p.Replicas, p.Adding, p.Removing
			}
		case ctx.Err() != nil, errors.Is(err, ErrNotController), errors.Is(err, ErrNotReady):
			// The whole request is retried (on the next controller):
			// the moves done already then change nothing, and a
			// cancellation done already is NO_REASSIGNMENT_IN_PROGRESS.
			return nil, err
		default:
			out[i].Code, _ = ErrorCode(err)
			out[i].Message = err.Error()
		}
	}
	return out, nil
}

func (n *Node) reassignOne(ctx context.Context, r PartitionReassignment) error {
	img := n.Image()
	t := img.Topic(r.Topic)
	p := img.Partition(r.Topic, r.Partition)
	switch {
	case t == nil:
		return fmt.Errorf("%w: %q", ErrUnknownTopic, r.Topic)
	case p == nil:
		return fmt.Errorf("%w: %s-%d", ErrUnknownPartition, r.Topic, r.Partition)
	}
	// The controller alone places the internal topic's replicas
	// (raiseOffsetsReplication); drains and rebalances move them.
	if err := metadata.RefuseInternal(t, "reassigned by hand"); err != nil {
		return err
	}
	target := r.Replicas
	if !r.Cancel && len(target) == 0 {
		return fmt.Errorf("%w: %s-%d: no replicas", ErrInvalidAssignment, r.Topic, r.Partition)
	}
	if r.KeepReplicationFactor && !r.Cancel && len(target) != len(p.Target()) {
		return fmt.Errorf("%w: %s-%d has %d replicas, not %d", ErrInvalidReplicationFactor, r.Topic, r.Partition, len(p.Target()), len(target))
	}
	if r.Cancel {
		if !p.Reassigning() {
			return fmt.Errorf("%w: %s-%d", ErrNoReassignmentInProgress, r.Topic, r.Partition)
		}
		target = slices.DeleteFunc(slices.Clone(p.Replicas), func(b int) bool { return slices.Contains(p.Adding, b) })
	}
	_, err := n.apply(ctx, metadata.Command{Type: metadata.CmdReassign, Reassign: &metadata.Reassign{
		Moves: []metadata.Move{{Topic: r.Topic, Partition: r.Partition, Target: target}}}})
	return err
}

// Reassignment is a partition being reassigned: its replicas now (the
// target first, then those that leave), those being added and those
// leaving once the added ones are in sync.
type Reassignment struct {
	Topic     string
	Partition int
	Replicas  []int
	Adding    []int
	Removing  []int
}

// Reassignments lists the partitions being reassigned, of the topics
// named or of every topic, from this broker's image.
func (n *Node) Reassignments(topics []string) []Reassignment {
	img := n.Image()
	var out []Reassignment
	for _, name := range img.TopicNames() {
		if len(topics) > 0 && !slices.Contains(topics, name) {
			continue
		}
		for _, p := range img.Topics[name].Partitions {
			if p.Reassigning() {
				out = append(out, Reassignment{Topic: name, Partition: p.ID,
					Replicas: slices.Clone(p.Replicas), Adding: slices.Clone(p.Adding), Removing: slices.Clone(p.Removing)})
			}
		}
	}
	return out
}
