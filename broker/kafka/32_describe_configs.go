package kafka

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/topicconfig"
)

// DescribeConfigs v0–4: a topic's configs, every key of the topic config
// table (broker/topicconfig) or those asked: an override set on the topic
// is DYNAMIC_TOPIC_CONFIG, any other key its table default,
// DEFAULT_CONFIG (null where the default is to leave it unset). A
// broker's log.* settings that change a default are not shown. A broker's
// own configs (resource name its id) are its broker-wide settings
// (docs/configuration.md), read-only: those its properties file set are
// STATIC_BROKER_CONFIG, the others DEFAULT_CONFIG; as in Kafka a client
// asks each broker for its own, and another broker's id is
// INVALID_REQUEST. The cluster-wide dynamic defaults (an empty name) are
// none: settings are not changed over the protocol.
func init() { register(32, 0, 4, (*Server).describeConfigs) }

func (s *Server) describeConfigs(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.DescribeConfigsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range r.Resources {
		res := kmsg.NewDescribeConfigsResponseResource()
		res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
		if rr.ResourceType == kmsg.ConfigResourceTypeBroker {
			resp.Resources = append(resp.Resources, s.describeBroker(ctx, r, rr, res))
			continue
		}
		if rr.ResourceType != kmsg.ConfigResourceTypeTopic {
			res.ErrorCode = kerr.InvalidRequest.Code
			res.ErrorMessage = kmsg.StringPtr("only topic and broker configs are described")
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

// describeBroker answers a broker resource: this broker's settings, or
// those asked.
func (s *Server) describeBroker(ctx context.Context, r *kmsg.DescribeConfigsRequest, rr kmsg.DescribeConfigsRequestResource,
	res kmsg.DescribeConfigsResponseResource) kmsg.DescribeConfigsResponseResource {
	switch rr.ResourceName {
	case "":
		return res
	case strconv.Itoa(int(s.opts.NodeID)):
	default:
		res.ErrorCode = kerr.InvalidRequest.Code
		res.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("this is broker %d; ask broker %s for its configs", s.opts.NodeID, rr.ResourceName))
		return res
	}
	settings, err := s.opts.Core.Settings(ctx)
	if err != nil {
		res.ErrorCode, res.ErrorMessage = errorCode(err), errorMessage(err)
		return res
	}
	for _, setting := range settings {
		if rr.ConfigNames != nil && !slices.Contains(rr.ConfigNames, setting.Name) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value, c.ReadOnly = setting.Name, setting.Value, true
		c.Source, c.IsDefault = kmsg.ConfigSourceDefaultConfig, true
		if setting.Given {
			c.Source, c.IsDefault = kmsg.ConfigSourceStaticBrokerConfig, false
		}
		if r.IncludeDocumentation {
			c.Documentation = kmsg.StringPtr(setting.Doc)
		}
		res.Configs = append(res.Configs, c)
	}
	return res
}
