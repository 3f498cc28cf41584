package server

import (
	"math"
	"net/http"
	"strconv"

	"github.com/kairolog/kairolog/broker/client"
)

// brokerID reads {id}; it answers and returns false when it is not a broker id.
func (s *Server) brokerID(w http.ResponseWriter, r *http.Request) (int32, bool) {
	v := r.PathValue("id")
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt32 {
		s.fail(w, r, client.CodeInvalidArgument, "broker id must be an integer between 0 and %d, got %q", math.MaxInt32, v)
		return 0, false
	}
	return int32(n), true
}

func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	md, err := s.b.Metadata(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, md)
}

func (s *Server) listBrokers(w http.ResponseWriter, r *http.Request) {
	bs, err := s.b.Brokers(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.BrokerList{Brokers: nonNil(bs)})
}

func (s *Server) describeBroker(w http.ResponseWriter, r *http.Request) {
	id, ok := s.brokerID(w, r)
	if !ok {
		return
	}
	b, err := s.b.BrokerInfo(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

func (s *Server) safeToRestart(w http.ResponseWriter, r *http.Request) {
	id, ok := s.brokerID(w, r)
	if !ok {
		return
	}
	res, err := s.b.SafeToRestart(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) drainBroker(w http.ResponseWriter, r *http.Request) {
	id, ok := s.brokerID(w, r)
	if !ok {
		return
	}
	remaining, err := s.b.Drain(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, client.DrainResponse{Status: "draining", Broker: id, RemainingReplicas: remaining})
}

func (s *Server) cancelDrain(w http.ResponseWriter, r *http.Request) {
	id, ok := s.brokerID(w, r)
	if !ok {
		return
	}
	if err := s.b.CancelDrain(r.Context(), id); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.BrokerStatus{Status: "active", Broker: id})
}

func (s *Server) demoteVoter(w http.ResponseWriter, r *http.Request) {
	id, ok := s.brokerID(w, r)
	if !ok {
		return
	}
	if err := s.b.DemoteVoter(r.Context(), id); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.BrokerStatus{Status: "non-voter", Broker: id})
}

func (s *Server) removeBroker(w http.ResponseWriter, r *http.Request) {
	id, ok := s.brokerID(w, r)
	if !ok {
		return
	}
	if err := s.b.RemoveBroker(r.Context(), id); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.BrokerStatus{Status: "removed", Broker: id})
}

func (s *Server) rebalanceCluster(w http.ResponseWriter, r *http.Request) {
	moves, err := s.b.RebalanceCluster(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, client.ClusterRebalanceResponse{Status: "rebalancing", Moves: moves})
}
