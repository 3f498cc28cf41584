package kafka

import (
	"context"
	"maps"
	"slices"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// CreateTopics v0–7: each topic through the controller, with its partition
// count and replication factor (-1: the broker's num.partitions and
// default.replication.factor) and its configs. Explicit replica
// assignments are INVALID_REQUEST: the controller places replicas itself.
// validate_only (v1+) is INVALID_REQUEST too, rather than an answer that
// checked less than a creation would. v5+ answers the topic's partitions,
// replication factor and configs, v7 its id.
func init() { register(19, 0, 7, (*Server).createTopics) }

func (s *Server) createTopics(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.CreateTopicsRequest)
	resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
	seen := map[string]int{}
	for _, rt := range r.Topics {
		seen[rt.Topic]++
	}
	for _, rt := range r.Topics {
		t := kmsg.NewCreateTopicsResponseTopic()
		t.Topic = rt.Topic
		fail := func(k *kerr.Error, msg string) {
			t.ErrorCode, t.ErrorMessage = k.Code, &msg
		}
		switch {
		case seen[rt.Topic] > 1:
			// Kafka answers a name given twice once per mention, each
			// INVALID_REQUEST, and creates neither.
			fail(kerr.InvalidRequest, "topic named more than once in the request")
		case len(rt.ReplicaAssignment) > 0:
			fail(kerr.InvalidRequest, "replica assignments are not supported: the controller places replicas")
		case r.ValidateOnly:
			fail(kerr.InvalidRequest, "validate_only is not supported")
		case rt.NumPartitions == 0 || rt.NumPartitions < -1:
			fail(kerr.InvalidPartitions, "partitions must be at least 1")
		case rt.ReplicationFactor == 0 || rt.ReplicationFactor < -1:
			fail(kerr.InvalidReplicationFactor, "replication factor must be at least 1")
		default:
			s.createTopic(ctx, rt, &t)
		}
		if t.ErrorCode != 0 {
			t.NumPartitions, t.ReplicationFactor = -1, -1
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// createTopic creates one topic and fills its reply.
func (s *Server) createTopic(ctx context.Context, rt kmsg.CreateTopicsRequestTopic, t *kmsg.CreateTopicsResponseTopic) {
	spec := api.CreateTopicRequest{Name: rt.Topic, Partitions: max(rt.NumPartitions, 0),
		ReplicationFactor: max(rt.ReplicationFactor, 0)}
	for _, c := range rt.Configs {
		if c.Value == nil {
			continue // null: the default, as no override
		}
		if spec.Config == nil {
			spec.Config = map[string]string{}
		}
		spec.Config[c.Name] = *c.Value
	}
	res, err := s.opts.Core.CreateTopic(ctx, spec)
	if err != nil {
		t.ErrorCode, t.ErrorMessage = errorCode(err), errorMessage(err)
		return
	}
	t.NumPartitions, t.ReplicationFactor = res.Partitions, res.ReplicationFactor
	if id, err := uuid.Parse(res.TopicID); err == nil {
		t.TopicID = id
	}
	names := slices.Sorted(maps.Keys(spec.Config))
	for _, name := range names {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		value := spec.Config[name]
		c.Name, c.Value, c.Source = name, &value, int8(kmsg.ConfigSourceDynamicTopicConfig)
		t.Configs = append(t.Configs, c)
	}
}
