package httpapi

import (
	"context"
	"math"
	"net/http"
	"strconv"

	"github.com/kairolog/kairolog/broker/api"
)

func (s *Server) clusterRoutes() {
	s.handle("GET /metadata", "metadata", kindAdmin, endpoint(s, none, withoutRequest(s.b.Metadata), result))
	s.handle("GET /brokers", "list_brokers", kindAdmin, endpoint(s, none, withoutRequest(s.b.Brokers),
		ok(func(_ struct{}, bs []api.BrokerInfo) any { return map[string][]api.BrokerInfo{"brokers": nonNil(bs)} })))
	s.handle("GET /brokers/{id}", "describe_broker", kindAdmin, endpoint(s, readBrokerID, s.b.BrokerInfo, result))
	s.handle("GET /brokers/{id}/safe-to-restart", "safe_to_restart", kindQuiet, endpoint(s, readBrokerID, s.b.SafeToRestart, result))
	s.handle("POST /brokers/{id}/drain", "drain_broker", kindAdmin, endpoint(s, readBrokerID, s.b.Drain,
		func(id int32, remaining int) (int, any) {
			return http.StatusAccepted, withStatus{"draining", struct {
				Broker            int32 `json:"broker"`
				RemainingReplicas int   `json:"remaining_replicas"`
			}{id, remaining}}
		}))
	s.handle("POST /brokers/{id}/cancel-drain", "cancel_drain", kindAdmin, endpoint(s, readBrokerID, noResult(s.b.CancelDrain), brokerStatus("active")))
	s.handle("DELETE /brokers/{id}", "remove_broker", kindAdmin, endpoint(s, readBrokerID, noResult(s.b.RemoveBroker), brokerStatus("removed")))
	s.handle("POST /brokers/{id}/demote", "demote_voter", kindAdmin, endpoint(s, readBrokerID, noResult(s.b.DemoteVoter), brokerStatus("non-voter")))
	s.handle("POST /cluster/rebalance", "rebalance_cluster", kindAdmin, endpoint(s, none, withoutRequest(s.b.RebalanceCluster),
		func(_ struct{}, moves int) (int, any) {
			return http.StatusAccepted, withStatus{"rebalancing", struct {
				Moves int `json:"moves"`
			}{moves}}
		}))
}

// readBrokerID reads {id}, a broker id.
func readBrokerID(_ *Server, r *http.Request) (int32, error) {
	v := r.PathValue("id")
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt32 {
		return 0, api.Errorf(api.CodeInvalidArgument, "broker id must be an integer between 0 and %d, got %q", math.MaxInt32, v)
	}
	return int32(n), nil
}

// brokerStatus answers what a change did to a broker.
func brokerStatus(status string) func(int32, struct{}) (int, any) {
	return func(id int32, _ struct{}) (int, any) {
		return http.StatusOK, withStatus{status, struct {
			Broker int32 `json:"broker"`
		}{id}}
	}
}

// none reads a route that takes nothing.
func none(*Server, *http.Request) (struct{}, error) { return struct{}{}, nil }

// withoutRequest is a core call that takes nothing.
func withoutRequest[Resp any](call func(context.Context) (Resp, error)) func(context.Context, struct{}) (Resp, error) {
	return func(ctx context.Context, _ struct{}) (Resp, error) { return call(ctx) }
}
