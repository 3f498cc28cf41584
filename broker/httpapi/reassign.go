package httpapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/kairolog/kairolog/broker/api"
)

// POST /topics/{name}/reassignments: Kafka's AlterPartitionReassignments
// (kafka-reassign-partitions --execute, --cancel) over HTTP. Each
// partition is answered on its own, in order: its replicas afterwards, or
// the error that left it as it was. GET /topics/{name} shows the progress.
// Kafka asks Alter on the cluster for it.
func (s *Server) reassignRoutes() {
	s.handle("POST /topics/{name}/reassignments", "reassign_partitions", kindAdmin, endpoint(s, fromBody[[]api.PartitionReassignment, reassignBody],
		s.reassign,
		func(req []api.PartitionReassignment, out []api.ReassignmentAnswer) (int, any) {
			return http.StatusOK, struct {
				Name       string                   `json:"name"`
				Partitions []api.ReassignmentAnswer `json:"partitions"`
			}{req[0].Topic, out}
		}))
}

type reassignBody struct {
	Partitions *[]struct {
		Partition *int32   `json:"partition"`
		Replicas  *[]int32 `json:"replicas"`
		Cancel    bool     `json:"cancel"`
	} `json:"partitions"`
}

func (b *reassignBody) request(r *http.Request) ([]api.PartitionReassignment, error) {
	topic := r.PathValue("name")
	if b.Partitions == nil || len(*b.Partitions) == 0 {
		return nil, required("partitions")
	}
	seen := map[int32]bool{}
	out := make([]api.PartitionReassignment, 0, len(*b.Partitions))
	for i, p := range *b.Partitions {
		switch {
		case p.Partition == nil:
			return nil, required(fmt.Sprintf("partitions[%d].partition", i))
		case *p.Partition < 0:
			return nil, api.Errorf(api.CodeInvalidArgument, "partitions[%d].partition must be at least 0, got %d", i, *p.Partition)
		case seen[*p.Partition]:
			return nil, api.Errorf(api.CodeInvalidArgument, "partition %d is listed twice", *p.Partition)
		case p.Cancel == (p.Replicas != nil):
			return nil, api.Errorf(api.CodeInvalidArgument, "partitions[%d] needs either replicas or \"cancel\": true", i)
		}
		seen[*p.Partition] = true
		pr := api.PartitionReassignment{Topic: topic, Partition: *p.Partition, Cancel: p.Cancel}
		if p.Replicas != nil {
			if len(*p.Replicas) == 0 {
				return nil, api.Errorf(api.CodeInvalidArgument, "partitions[%d].replicas must name at least one broker", i)
			}
			pr.Replicas = *p.Replicas
		}
		out = append(out, pr)
	}
	return out, nil
}

// reassign is the route's core call: a topic that does not exist fails
// the whole request, as on the other topic routes.
func (s *Server) reassign(ctx context.Context, req []api.PartitionReassignment) ([]api.ReassignmentAnswer, error) {
	out, err := s.b.ReassignPartitions(ctx, req)
	if err == nil && out[0].Code == api.CodeUnknownTopic {
		return nil, api.Errorf(api.CodeUnknownTopic, "%s", out[0].Error)
	}
	return out, err
}
