package kafka

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListPartitionReassignments v0 (kafka-reassign-partitions --verify and
// --list, kadm's ListPartitionReassignments): the partitions being
// reassigned, of the partitions named or of every topic when the topics
// are null, with their replicas, those being added and those leaving,
// from this broker's metadata. Authorization: Describe on the cluster.
func init() { register(46, 0, 0, (*Server).listPartitionReassignments) }

func (s *Server) listPartitionReassignments(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.ListPartitionReassignmentsRequest)
	resp := r.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	var topics []string
	asked := map[string][]int32{}
	for _, t := range r.Topics {
		topics = append(topics, t.Topic)
		asked[t.Topic] = append(asked[t.Topic], t.Partitions...)
	}
	if r.Topics != nil && len(topics) == 0 {
		return resp // nothing named
	}
	ongoing, err := s.opts.Core.Reassignments(ctx, topics)
	if err != nil {
		msg := err.Error()
		resp.ErrorCode, resp.ErrorMessage = errorCode(err), &msg
		return resp
	}
	for _, o := range ongoing {
		if r.Topics != nil && !slices.Contains(asked[o.Topic], o.Partition) {
			continue
		}
		i := len(resp.Topics) - 1
		if i < 0 || resp.Topics[i].Topic != o.Topic {
			t := kmsg.NewListPartitionReassignmentsResponseTopic()
			t.Topic = o.Topic
			resp.Topics = append(resp.Topics, t)
			i++
		}
		p := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		p.Partition, p.Replicas, p.AddingReplicas, p.RemovingReplicas = o.Partition, o.Replicas, o.Adding, o.Removing
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, p)
	}
	return resp
}
