package httpapi

import (
	"context"
	"net/http"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/core"
)

// POST /topics/{name}/delete-records: Kafka's DeleteRecords
// (kafka-delete-records) over HTTP. Each partition is answered on its
// own, as Kafka does: its low watermark, or the error that left it as it
// was; a topic that does not exist, or one of the brokers' own, fails the
// whole request.
func (s *Server) deleteRecordsRoutes() {
	s.handle("POST /topics/{name}/delete-records", "delete_records", kindAdmin, endpoint(s, fromBody[recordsDeletion, deleteRecordsBody], s.deleteRecords,
		ok(func(r recordsDeletion, out []api.RecordsDeletion) any {
			return struct {
				Name       string                `json:"name"`
				Partitions []api.RecordsDeletion `json:"partitions"`
			}{r.Name, out}
		})))
}

// recordsDeletion is a decoded delete-records request.
type recordsDeletion struct {
	Name       string
	Partitions []api.PartitionRecordsDeletion
}

func (s *Server) deleteRecords(ctx context.Context, r recordsDeletion) ([]api.RecordsDeletion, error) {
	out := make([]api.RecordsDeletion, 0, len(r.Partitions))
	for _, p := range r.Partitions {
		res, err := s.b.DeleteRecords(ctx, api.DeleteRecordsRequest{Topic: r.Name, Partition: p.Partition, Offset: p.Offset})
		if err == nil {
			out = append(out, api.RecordsDeletion{Partition: p.Partition, LowWatermark: &res.LowWatermark})
			continue
		}
		e, known := core.AsAPIError(err)
		if !known || e.Code == api.CodeUnknownTopic || e.Code == api.CodeInternalTopic {
			return nil, err
		}
		out = append(out, api.RecordsDeletion{Partition: p.Partition, Error: e.Message, Code: e.Code})
	}
	return out, nil
}

type deleteRecordsBody struct {
	Partitions *[]api.PartitionRecordsDeletion `json:"partitions"`
}

func (b *deleteRecordsBody) request(r *http.Request) (recordsDeletion, error) {
	req := recordsDeletion{Name: r.PathValue("name")}
	if b.Partitions == nil || len(*b.Partitions) == 0 {
		return req, required("partitions")
	}
	seen := map[int32]bool{}
	for i, p := range *b.Partitions {
		switch {
		case p.Partition < 0:
			return req, api.Errorf(api.CodeInvalidArgument, "partitions[%d].partition must be at least 0, got %d", i, p.Partition)
		case p.Offset < api.HighWatermarkOffset:
			return req, api.Errorf(api.CodeInvalidArgument, "partitions[%d].offset must be at least -1 (the high watermark), got %d", i, p.Offset)
		case seen[p.Partition]:
			return req, api.Errorf(api.CodeInvalidArgument, "partition %d is listed twice", p.Partition)
		}
		seen[p.Partition] = true
		req.Partitions = append(req.Partitions, p)
	}
	return req, nil
}
