package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// AlterConfigs v0–2, the request IncrementalAlterConfigs replaced and
// clients such as kafkajs's admin.alterConfigs and sarama still send: the
// configs given become the topic's whole set of overrides, as PUT
// /topics/{name}/config makes them, and every override left out goes back
// to its default. A config without a value is left out, as Kafka leaves
// it. Broker resources, validate_only and a config named twice are
// INVALID_REQUEST, as in IncrementalAlterConfigs.
func init() { register(33, 0, 2, (*Server).alterConfigs) }

func (s *Server) alterConfigs(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.AlterConfigsRequest)
	resp := r.ResponseKind().(*kmsg.AlterConfigsResponse)
	for _, rr := range r.Resources {
		res := kmsg.NewAlterConfigsResponseResource()
		res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
		change, msg := replacingChange(rr, r.ValidateOnly)
		if msg != "" {
			res.ErrorCode, res.ErrorMessage = kerr.InvalidRequest.Code, &msg
		} else {
			_, err := s.opts.Core.AlterTopicConfig(ctx, change)
			res.ErrorCode, res.ErrorMessage = errorCode(err), errorMessage(err)
		}
		resp.Resources = append(resp.Resources, res)
	}
	return resp
}

// replacingChange is the change that makes rr's configs a topic's
// overrides, or why the request is refused.
func replacingChange(rr kmsg.AlterConfigsRequestResource, validateOnly bool) (api.TopicConfigChange, string) {
	change := api.TopicConfigChange{Topic: rr.ResourceName, Set: map[string]string{}, Replace: true}
	switch {
	case rr.ResourceType != kmsg.ConfigResourceTypeTopic:
		return change, "only topic configs are altered"
	case validateOnly:
		return change, "validate_only is not supported"
	}
	named := map[string]bool{}
	for _, c := range rr.Configs {
		if named[c.Name] {
			return change, "config " + c.Name + " is named twice"
		}
		named[c.Name] = true
		if c.Value != nil {
			change.Set[c.Name] = *c.Value
		}
	}
	return change, ""
}
