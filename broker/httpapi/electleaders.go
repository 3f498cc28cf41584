package httpapi

import (
	"context"
	"net/http"

	"github.com/kairolog/kairolog/broker/api"
)

// POST /topics/{name}/elect-leaders: Kafka's ElectLeaders with the
// preferred election type (kafka-leader-election --election-type
// preferred) over HTTP. Each partition named, or every partition of the
// topic, is answered on its own: its leader once its preferred replica
// leads it, or why that replica does not (ELECTION_NOT_NEEDED: it already
// did; PREFERRED_LEADER_NOT_AVAILABLE); a topic that does not exist fails
// the whole request. Kafka asks Alter on the cluster for it.
func (s *Server) electLeadersRoutes() {
	s.handle("POST /topics/{name}/elect-leaders", "elect_leaders", kindAdmin, endpoint(s, fromBody[topicElection, electLeadersBody],
		func(ctx context.Context, r topicElection) ([]api.LeaderElection, error) {
			return s.b.ElectTopicLeaders(ctx, r.Name, r.Partitions)
		},
		ok(func(r topicElection, out []api.LeaderElection) any {
			return struct {
				Name       string               `json:"name"`
				Partitions []api.LeaderElection `json:"partitions"`
			}{r.Name, out}
		})))
}

// topicElection is a decoded elect-leaders request: no partitions means
// every partition of the topic.
type topicElection struct {
	Name       string
	Partitions []int32
}

type electLeadersBody struct {
	Partitions *[]int32 `json:"partitions"`
}

func (b *electLeadersBody) request(r *http.Request) (topicElection, error) {
	req := topicElection{Name: r.PathValue("name")}
	if b.Partitions == nil {
		return req, nil
	}
	seen := map[int32]bool{}
	for i, p := range *b.Partitions {
		switch {
		case p < 0:
			return req, api.Errorf(api.CodeInvalidArgument, "partitions[%d] must be at least 0, got %d", i, p)
		case seen[p]:
			return req, api.Errorf(api.CodeInvalidArgument, "partition %d is listed twice", p)
		}
		seen[p] = true
		req.Partitions = append(req.Partitions, p)
	}
	return req, nil
}
