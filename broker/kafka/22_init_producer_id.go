package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// InitProducerId v0–5: an idempotent producer's id, new for every call
// with epoch 0, as Kafka gives a producer without a transactional id (an
// id and epoch the producer sends back, v3+, are not bumped: it gets a new
// id). Transactions are not supported: a transactional id is
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, the error a Kafka client reports
// as fatal to the transactional producer rather than retrying.
func init() { register(22, 0, 5, (*Server).initProducerID) }

func (s *Server) initProducerID(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.InitProducerIDRequest)
	resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if r.TransactionalID != nil {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return resp
	}
	p, err := s.opts.Core.NewProducer(ctx)
	if err != nil {
		resp.ErrorCode = errorCode(err)
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = p.ID, p.Epoch
	return resp
}
