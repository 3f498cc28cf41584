package kafka

import (
	"context"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteTopics v0–6: each topic through the controller, by name, or by id
// (v6). A topic unknown by name is UNKNOWN_TOPIC_OR_PARTITION, by id
// UNKNOWN_TOPIC_ID.
func init() { register(20, 0, 6, (*Server).deleteTopics) }

func (s *Server) deleteTopics(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.DeleteTopicsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteTopicsResponse)
	type named struct {
		name *string
		id   [16]byte
	}
	var topics []named
	if r.Version < 6 {
		for i := range r.TopicNames {
			topics = append(topics, named{name: &r.TopicNames[i]})
		}
	} else {
		for _, rt := range r.Topics {
			topics = append(topics, named{name: rt.Topic, id: rt.TopicID})
		}
	}
	var byID map[[16]byte]string
	for _, n := range topics {
		t := kmsg.NewDeleteTopicsResponseTopic()
		t.Topic, t.TopicID = n.name, n.id
		name := ""
		switch {
		case n.name != nil:
			name = *n.name
		case n.id != [16]byte{}:
			if byID == nil {
				byID = s.topicNamesByID(ctx)
			}
			var ok bool
			if name, ok = byID[n.id]; !ok {
				t.ErrorCode = kerr.UnknownTopicID.Code
				resp.Topics = append(resp.Topics, t)
				continue
			}
			t.Topic = &name
		default:
			t.ErrorCode = kerr.InvalidRequest.Code
			resp.Topics = append(resp.Topics, t)
			continue
		}
		err := s.opts.Core.DeleteTopic(ctx, name)
		t.ErrorCode, t.ErrorMessage = errorCode(err), errorMessage(err)
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// topicNamesByID maps the topics' ids to their names.
func (s *Server) topicNamesByID(ctx context.Context) map[[16]byte]string {
	out := map[[16]byte]string{}
	topo, err := s.opts.Core.Topology(ctx)
	if err != nil {
		return out
	}
	for _, t := range topo.Topics {
		if id, err := uuid.Parse(t.TopicID); err == nil {
			out[id] = t.Name
		}
	}
	return out
}
