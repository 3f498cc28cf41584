package kafka

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// Produce v3–13: each partition's records are one RecordBatch v2, which the
// core stores as it is (setting only its base offset and partition leader
// epoch) after checking it, deduplicating an idempotent producer's retries.
// acks 0, 1 and -1 (all); with acks 0 nothing is answered. v13 names topics
// by id. A partition this broker does not lead answers
// NOT_LEADER_OR_FOLLOWER with the leader it knows (v10+). Versions below 3
// carry the older message formats (magic 0 and 1), which the log does not
// store, as Kafka 4 does not.
func init() { register(0, 3, 13, (*Server).produce) }

func (s *Server) produce(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.ProduceRequest)
	resp := r.ResponseKind().(*kmsg.ProduceResponse)
	var acks api.Acks
	var refuse *kerr.Error
	switch r.Acks {
	case 0, 1:
		acks = api.AcksLeader
	case -1:
		acks = api.AcksAll
	default:
		refuse = kerr.InvalidRequiredAcks
	}
	if r.TransactionID != nil {
		// Transactions are not supported: a transactional producer gets
		// no producer id (InitProducerId), so it cannot have got here.
		refuse = kerr.TransactionalIDAuthorizationFailed
	}
	timeout := time.Duration(r.TimeoutMillis) * time.Millisecond

	var wg sync.WaitGroup
	resp.Topics = make([]kmsg.ProduceResponseTopic, len(r.Topics))
	for i := range r.Topics {
		rt := &r.Topics[i]
		t := &resp.Topics[i]
		*t = kmsg.NewProduceResponseTopic()
		t.Topic, t.TopicID = rt.Topic, rt.TopicID
		t.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			p := &t.Partitions[j]
			*p = kmsg.NewProduceResponseTopicPartition()
			p.Partition, p.BaseOffset = rp.Partition, -1
			if refuse != nil {
				p.ErrorCode = refuse.Code
				continue
			}
			preq := api.ProduceBatchRequest{Topic: rt.Topic, Partition: rp.Partition, Batch: rp.Records,
				Acks: acks, Timeout: timeout}
			if r.Version >= 13 {
				preq.Topic, preq.TopicID = "", uuid.UUID(rt.TopicID).String()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := s.opts.Core.ProduceBatch(ctx, preq)
				s.produced(p, res, err, r.Version >= 13)
			}()
		}
	}
	wg.Wait()
	if r.Acks == 0 {
		return nil
	}
	s.addLeaderEndpoints(ctx, resp)
	return resp
}

// produced fills one partition's reply.
func (s *Server) produced(p *kmsg.ProduceResponseTopicPartition, res api.ProduceBatchResult, err error, byID bool) {
	p.ErrorCode, p.ErrorMessage = topicErrorCode(err, byID), errorMessage(err)
	if err == nil || p.ErrorCode == kerr.NotEnoughReplicasAfterAppend.Code {
		p.BaseOffset, p.LogStartOffset = res.BaseOffset, res.LogStartOffset
	}
	if leader, epoch, ok := leaderOf(err); ok {
		p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = leader, epoch
	}
}

// addLeaderEndpoints names, for replies that point a client at another
// leader (v10+), where that leader is.
func (s *Server) addLeaderEndpoints(ctx context.Context, resp *kmsg.ProduceResponse) {
	if resp.Version < 10 {
		return
	}
	want := map[int32]bool{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode == kerr.NotLeaderForPartition.Code && p.CurrentLeader.LeaderID >= 0 {
				want[p.CurrentLeader.LeaderID] = true
			}
		}
	}
	if len(want) == 0 {
		return
	}
	topo, err := s.opts.Core.Topology(ctx)
	if err != nil {
		return
	}
	for _, b := range s.metadataBrokers(topo) {
		if want[b.NodeID] {
			pb := kmsg.NewProduceResponseBroker()
			pb.NodeID, pb.Host, pb.Port, pb.Rack = b.NodeID, b.Host, b.Port, b.Rack
			resp.Brokers = append(resp.Brokers, pb)
		}
	}
}

// leaderOf is the leader a NOT_LEADER error names, if it names one.
func leaderOf(err error) (leader, epoch int32, ok bool) {
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeNotLeader || ae.Leader == nil {
		return -1, -1, false
	}
	epoch = -1
	if ae.LeaderEpoch != nil {
		epoch = *ae.LeaderEpoch
	}
	return *ae.Leader, epoch, true
}
