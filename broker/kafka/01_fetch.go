package kafka

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// Fetch v4–18: stored record batches as they are on disk, from the batch
// that holds each partition's fetch offset (a consumer skips the records
// before its offset, as with Kafka), below the high watermark. The core
// answers once min bytes are there across the partitions or after max
// wait, within max bytes per partition and per request (the first batch
// of the first partition always, whatever its size). v13+ names topics by
// id. Fetch sessions (KIP-227, v7+) are not kept: a client that asks for
// one gets session id 0 and goes on with full fetches, and an incremental
// fetch is FETCH_SESSION_ID_NOT_FOUND, as a broker whose session cache is
// full answers. Versions below 4 read the older message formats.
func init() { register(1, 4, 18, (*Server).fetch) }

func (s *Server) fetch(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.FetchRequest)
	resp := r.ResponseKind().(*kmsg.FetchResponse)
	if r.Version >= 7 && r.SessionEpoch > 0 {
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		return resp
	}
	freq := api.FetchBatchesRequest{MaxBytes: int(r.MaxBytes), MinBytes: int(r.MinBytes),
		MaxWait: time.Duration(r.MaxWaitMillis) * time.Millisecond}
	if freq.MaxBytes <= 0 {
		freq.MaxBytes = int(s.opts.MaxRequestBytes)
	}
	for _, rt := range r.Topics {
		for _, rp := range rt.Partitions {
			fp := api.FetchPartition{Topic: rt.Topic, Partition: rp.Partition, Offset: rp.FetchOffset,
				MaxBytes: int(rp.PartitionMaxBytes), CurrentLeaderEpoch: api.NoLeaderEpoch}
			if r.Version >= 9 {
				fp.CurrentLeaderEpoch = rp.CurrentLeaderEpoch
			}
			if r.Version >= 13 {
				fp.Topic, fp.TopicID = "", uuid.UUID(rt.TopicID).String()
			}
			freq.Partitions = append(freq.Partitions, fp)
		}
	}
	res, err := s.opts.Core.FetchBatches(ctx, freq)
	if err != nil {
		// The whole fetch failed (this broker is shutting down, say):
		// every partition carries the error.
		res = api.FetchBatchesResult{Partitions: make([]api.FetchedPartition, len(freq.Partitions))}
		for i := range res.Partitions {
			res.Partitions[i].Err = asAPIError(err)
		}
	}
	k := 0
	leaders := map[int32]bool{}
	for _, rt := range r.Topics {
		t := kmsg.NewFetchResponseTopic()
		t.Topic, t.TopicID = rt.Topic, rt.TopicID
		for range rt.Partitions {
			fp := res.Partitions[k]
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition = freq.Partitions[k].Partition
			k++
			p.HighWatermark, p.LastStableOffset, p.LogStartOffset = -1, -1, -1
			// Records are never null, even empty or beside an error, as
			// Kafka sends them: librdkafka fails a fetch whose records'
			// size is -1.
			p.RecordBatches = []byte{}
			if fp.Err != nil {
				p.ErrorCode = topicErrorCode(fp.Err, r.Version >= 13)
				if fp.Err.Code == api.CodeOffsetOutOfRange && fp.Err.HighWatermark != nil {
					p.HighWatermark, p.LastStableOffset = *fp.Err.HighWatermark, *fp.Err.HighWatermark
				}
				if leader, epoch, ok := leaderOf(fp.Err); ok {
					p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = leader, epoch
					leaders[leader] = true
				}
			} else {
				// Without transactions every record below the high
				// watermark is stable.
				p.HighWatermark, p.LastStableOffset, p.LogStartOffset = fp.HighWatermark, fp.HighWatermark, fp.LogStartOffset
				if fp.Batches != nil {
					p.RecordBatches = fp.Batches
				}
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	if len(leaders) > 0 && r.Version >= 16 {
		if topo, err := s.opts.Core.Topology(ctx); err == nil {
			for _, b := range s.metadataBrokers(topo) {
				if leaders[b.NodeID] {
					fb := kmsg.NewFetchResponseBroker()
					fb.NodeID, fb.Host, fb.Port, fb.Rack = b.NodeID, b.Host, b.Port, b.Rack
					resp.Brokers = append(resp.Brokers, fb)
				}
			}
		}
	}
	return resp
}

// asAPIError is err as the core's error type, INTERNAL when it is not one.
func asAPIError(err error) *api.Error {
	var ae *api.Error
	if errors.As(err, &ae) {
		return ae
	}
	if k := kafkaError(err); k == kerr.RequestTimedOut {
		return api.Errorf(api.CodeRequestTimedOut, "%v", err)
	}
	return api.Errorf(api.CodeInternal, "%v", err)
}
