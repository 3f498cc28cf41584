package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreatePartitions v0–3: raises each topic's partition count to Count
// through the controller (a count not above the current one is
// INVALID_PARTITIONS). Explicit assignments and validate_only are
// INVALID_REQUEST, as in CreateTopics.
func init() { register(37, 0, 3, (*Server).createPartitions) }

func (s *Server) createPartitions(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.CreatePartitionsRequest)
	resp := r.ResponseKind().(*kmsg.CreatePartitionsResponse)
	for _, rt := range r.Topics {
		t := kmsg.NewCreatePartitionsResponseTopic()
		t.Topic = rt.Topic
		var err error
		switch {
		case len(rt.Assignment) > 0:
			t.ErrorCode = kerr.InvalidRequest.Code
			t.ErrorMessage = kmsg.StringPtr("replica assignments are not supported: the controller places replicas")
		case r.ValidateOnly:
			t.ErrorCode = kerr.InvalidRequest.Code
			t.ErrorMessage = kmsg.StringPtr("validate_only is not supported")
		default:
			err = s.opts.Core.AddPartitions(ctx, rt.Topic, rt.Count)
			t.ErrorCode, t.ErrorMessage = errorCode(err), errorMessage(err)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}
