package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// IncrementalAlterConfigs v0–1: sets and deletes a topic's config
// overrides through the controller, all of one resource or none, checked
// against the topic config table (INVALID_CONFIG). APPEND and SUBTRACT
// apply to list-valued configs, which topics here do not have:
// INVALID_REQUEST, as are broker resources and validate_only.
func init() { register(44, 0, 1, (*Server).incrementalAlterConfigs) }

func (s *Server) incrementalAlterConfigs(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.IncrementalAlterConfigsRequest)
	resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	for _, rr := range r.Resources {
		res := kmsg.NewIncrementalAlterConfigsResponseResource()
		res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
		fail := func(msg string) {
			res.ErrorCode, res.ErrorMessage = kerr.InvalidRequest.Code, &msg
		}
		change := api.TopicConfigChange{Topic: rr.ResourceName, Set: map[string]string{}}
		switch {
		case rr.ResourceType != kmsg.ConfigResourceTypeTopic:
			fail("only topic configs are altered")
		case r.ValidateOnly:
			fail("validate_only is not supported")
		}
		for _, c := range rr.Configs {
			if res.ErrorCode != 0 {
				break
			}
			switch c.Op {
			case kmsg.IncrementalAlterConfigOpSet:
				if c.Value == nil {
					fail("SET of " + c.Name + " without a value")
					break
				}
				change.Set[c.Name] = *c.Value
			case kmsg.IncrementalAlterConfigOpDelete:
				change.Remove = append(change.Remove, c.Name)
			default:
				fail("APPEND and SUBTRACT apply to list configs, which topics do not have")
			}
		}
		if res.ErrorCode == 0 {
			_, err := s.opts.Core.AlterTopicConfig(ctx, change)
			res.ErrorCode, res.ErrorMessage = errorCode(err), errorMessage(err)
		}
		resp.Resources = append(resp.Resources, res)
	}
	return resp
}
