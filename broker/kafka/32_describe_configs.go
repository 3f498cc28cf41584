package kafka

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/topicconfig"
)

// DescribeConfigs v0–4: a topic's configs, every key of the topic config
// table (broker/topicconfig) or those asked: an override set on the topic
// is DYNAMIC_TOPIC_CONFIG, any other key its table default,
// DEFAULT_CONFIG (null where the default is to leave it unset). A
// broker's log.* settings that change a default are not shown. Broker
// resources are INVALID_REQUEST: a broker's settings are read from its
// properties file and flags, not over the protocol.
func init() { register(32, 0, 4, (*Server).describeConfigs) }

func (s *Server) describeConfigs(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.DescribeConfigsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range r.Resources {
		res := kmsg.NewDescribeConfigsResponseResource()
		res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
		if rr.ResourceType != kmsg.ConfigResourceTypeTopic {
			res.ErrorCode = kerr.InvalidRequest.Code
			res.ErrorMessage = kmsg.StringPtr("only topic configs are described")
			resp.Resources = append(resp.Resources, res)
			continue
		}
		d, err := s.opts.Core.DescribeTopic(ctx, rr.ResourceName)
		if err != nil {
			res.ErrorCode, res.ErrorMessage = errorCode(err), errorMessage(err)
			resp.Resources = append(resp.Resources, res)
			continue
		}
		for _, k := range topicconfig.Keys {
			if rr.ConfigNames != nil && !slices.Contains(rr.ConfigNames, k.Name) {
				continue
			}
			c := kmsg.NewDescribeConfigsResponseResourceConfig()
			c.Name = k.Name
			if v, ok := d.Config[k.Name]; ok {
				c.Value, c.Source = &v, kmsg.ConfigSourceDynamicTopicConfig
			} else {
				c.IsDefault, c.Source = true, kmsg.ConfigSourceDefaultConfig
				if k.Default != "unset" {
					def := k.Default
					c.Value = &def
				}
			}
			if r.IncludeDocumentation {
				doc := k.Doc
				c.Documentation = &doc
			}
			res.Configs = append(res.Configs, c)
		}
		resp.Resources = append(resp.Resources, res)
	}
	return resp
}
