package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FindCoordinator v0–6: the broker that coordinates a group, one key
// (v0–3) or several (v4+). On the gateway that is the gateway itself,
// which passes group requests on. Transactions are not supported: a
// transaction key is INVALID_REQUEST.
func init() { register(10, 0, 6, (*Server).findCoordinator) }

// coordinatorKeyGroup is FindCoordinator's key type of a group.
const coordinatorKeyGroup = 0

func (s *Server) findCoordinator(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.FindCoordinatorRequest)
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	if r.Version < 4 {
		c := s.coordinator(ctx, r.CoordinatorKey, r.CoordinatorType)
		resp.ErrorCode, resp.ErrorMessage = c.ErrorCode, c.ErrorMessage
		resp.NodeID, resp.Host, resp.Port = c.NodeID, c.Host, c.Port
		return resp
	}
	for _, key := range r.CoordinatorKeys {
		resp.Coordinators = append(resp.Coordinators, s.coordinator(ctx, key, r.CoordinatorType))
	}
	return resp
}

// coordinator finds one key's coordinator.
func (s *Server) coordinator(ctx context.Context, key string, keyType int8) kmsg.FindCoordinatorResponseCoordinator {
	c := kmsg.NewFindCoordinatorResponseCoordinator()
	c.Key, c.NodeID, c.Port = key, -1, -1
	if keyType != coordinatorKeyGroup {
		c.ErrorCode = kerr.InvalidRequest.Code
		c.ErrorMessage = kmsg.StringPtr("only group coordinators: transactions are not supported")
		return c
	}
	id, err := s.opts.Core.GroupCoordinator(ctx, key)
	if err != nil {
		c.ErrorCode, c.ErrorMessage = errorCode(err), errorMessage(err)
		return c
	}
	topo, err := s.opts.Core.Topology(ctx)
	if err != nil {
		c.ErrorCode, c.ErrorMessage = errorCode(err), errorMessage(err)
		return c
	}
	for _, b := range s.metadataBrokers(topo) {
		if b.NodeID == id || s.opts.Mode == Gateway {
			c.NodeID, c.Host, c.Port = b.NodeID, b.Host, b.Port
			return c
		}
	}
	// The coordinator is fenced or has no Kafka listener.
	c.ErrorCode = kerr.CoordinatorNotAvailable.Code
	return c
}
