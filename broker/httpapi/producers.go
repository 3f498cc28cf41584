package httpapi

import (
	"context"
	"net/http"

	"github.com/kairolog/kairolog/broker/api"
)

// POST /producers gives an idempotent producer its id and epoch; its
// produces then carry them with a sequence (docs/api.md, Idempotent
// produce). The body, if any, is not read.
func (s *Server) producerRoutes() {
	s.handle("POST /producers", "new_producer", kindAdmin, endpoint(s, noRequest, func(ctx context.Context, _ struct{}) (api.Producer, error) {
		return s.b.NewProducer(ctx)
	}, func(_ struct{}, p api.Producer) (int, any) { return http.StatusCreated, p }))
}

func noRequest(*Server, *http.Request) (struct{}, error) { return struct{}{}, nil }
