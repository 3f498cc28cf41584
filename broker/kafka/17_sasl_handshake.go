package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SaslHandshake v0–1 and SaslAuthenticate v0–2. They run before any other
// request (sasl.go): always on a listener that authenticates with SASL,
// and when the client offers a login on a listener without authentication.
// These handlers answer them afterwards: ILLEGAL_SASL_STATE, as Kafka
// answers a handshake on a connection that is not (or no longer)
// authenticating.
func init() {
	register(17, 0, 1, (*Server).saslHandshakeAfterwards)
	register(36, 0, 2, (*Server).saslAuthenticateAfterwards)
}

func (s *Server) saslHandshakeAfterwards(_ context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.SASLHandshakeRequest)
	resp := r.ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.ErrorCode = kerr.IllegalSaslState.Code
	resp.SupportedMechanisms = []string{}
	return resp
}

func (s *Server) saslAuthenticateAfterwards(_ context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.SASLAuthenticateRequest)
	resp := r.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	resp.ErrorCode = kerr.IllegalSaslState.Code
	resp.ErrorMessage = kmsg.StringPtr("no SASL exchange is under way on this connection")
	resp.SASLAuthBytes = []byte{}
	return resp
}
