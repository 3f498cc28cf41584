package kafka

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// AlterPartitionReassignments v0–1 (kafka-reassign-partitions --execute
// and --cancel, kadm's AlterPartitionAssignments): each partition given
// replicas moves to them, the added ones catching up before the others
// leave; null replicas cancel the reassignment in progress
// (NO_REASSIGNMENT_IN_PROGRESS when there is none). Each partition is
// answered on its own: replicas on unknown brokers, listed twice or none,
// or a move that would leave no in-sync replica, are
// INVALID_REPLICA_ASSIGNMENT; an unknown partition is
// UNKNOWN_TOPIC_OR_PARTITION; __consumer_offsets is
// INVALID_TOPIC_EXCEPTION (the brokers place it; drains move it). With
// v1's AllowReplicationFactorChange false, replicas of another count than
// the partition's are INVALID_REPLICATION_FACTOR (KIP-860).
// Authorization: Alter on the cluster.
func init() { register(45, 0, 1, (*Server).alterPartitionReassignments) }

func (s *Server) alterPartitionReassignments(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.AlterPartitionAssignmentsRequest)
	resp := r.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	resp.AllowReplicationFactorChange = r.AllowReplicationFactorChange
	var asked []api.PartitionReassignment
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			asked = append(asked, api.PartitionReassignment{Topic: t.Topic, Partition: p.Partition,
				Replicas: p.Replicas, Cancel: p.Replicas == nil, KeepReplicationFactor: !r.AllowReplicationFactorChange})
		}
	}
	if len(asked) == 0 {
		return resp
	}
	if r.TimeoutMillis > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(r.TimeoutMillis)*time.Millisecond)
		defer cancel()
	}
	answers, err := s.opts.Core.ReassignPartitions(ctx, asked)
	if err == nil && len(answers) != len(asked) {
		err = fmt.Errorf("%d answers to %d partitions", len(answers), len(asked))
	}
	if err != nil {
		msg := err.Error()
		resp.ErrorCode, resp.ErrorMessage = errorCode(err), &msg
		return resp
	}
	// The answers come in the order asked.
	for _, t := range r.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for range t.Partitions {
			a := answers[0]
			answers = answers[1:]
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition = a.Partition
			if a.Code != "" {
				rp.ErrorCode, rp.ErrorMessage = reassignmentError(a.Code), &a.Error
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// reassignmentError is the Kafka code of a partition's refused move:
// Kafka calls every bad replica list INVALID_REPLICA_ASSIGNMENT.
func reassignmentError(code string) int16 {
	switch code {
	case api.CodeInvalidArgument, api.CodeReassignmentInfeasible:
		return kerr.InvalidReplicaAssignment.Code
	}
	return errorCode(api.Errorf(code, "%s", code))
}
