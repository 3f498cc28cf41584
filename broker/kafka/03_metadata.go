package kafka

import (
	"context"
	"net"
	"strconv"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// Metadata v0–13: brokers, the controller and the topics a client asked for
// (all of them when it names none), with every partition's leader, leader
// epoch (v7+), replicas, in-sync and offline (v5+) replicas, and topic ids
// (v10+, which may also name the topics asked for). A topic a client names
// that does not exist is created when the client allows it (v4+) and the
// broker's auto.create.topics.enable does. On the gateway, this broker is
// the only one, and leads everything. With authorization on, the topics
// the principal may not Describe are left out, or TOPIC_AUTHORIZATION_FAILED
// when named (authorize.go).
func init() { register(3, 0, 13, (*Server).metadata) }

func (s *Server) metadata(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.MetadataRequest)
	resp := r.ResponseKind().(*kmsg.MetadataResponse)
	topo, err := s.opts.Core.Topology(ctx)
	if err != nil {
		// Only v13 has a top-level error; older clients see no brokers and
		// no topics, and ask again.
		resp.ErrorCode = errorCode(err)
		return resp
	}
	resp.ClusterID = &topo.ClusterID
	resp.ControllerID = topo.ControllerID
	resp.Brokers = s.metadataBrokers(topo)
	if s.opts.Mode == Gateway {
		resp.ControllerID = s.opts.NodeID
	}

	byName := make(map[string]*api.TopicPlacement, len(topo.Topics))
	byID := make(map[[16]byte]*api.TopicPlacement, len(topo.Topics))
	for i := range topo.Topics {
		t := &topo.Topics[i]
		byName[t.Name] = t
		if id, err := uuid.Parse(t.TopicID); err == nil {
			byID[id] = t
		}
	}
	// Before v1 an empty list asks for every topic; since, a null one does.
	all := r.Topics == nil || (r.Version == 0 && len(r.Topics) == 0)
	if all {
		for i := range topo.Topics {
			resp.Topics = append(resp.Topics, s.metadataTopic(topo, &topo.Topics[i]))
		}
		return resp
	}
	for _, rt := range r.Topics {
		var t *api.TopicPlacement
		switch {
		case rt.Topic == nil && rt.TopicID != [16]byte{}:
			if t = byID[rt.TopicID]; t == nil {
				mt := kmsg.NewMetadataResponseTopic()
				mt.TopicID, mt.ErrorCode = rt.TopicID, kerr.UnknownTopicID.Code
				resp.Topics = append(resp.Topics, mt)
				continue
			}
		case rt.Topic != nil:
			if !mayDescribeTopic(s.opts.Core, ctx, *rt.Topic) {
				// Named but not to be seen: Kafka says so rather than
				// whether it exists, and never creates it.
				mt := kmsg.NewMetadataResponseTopic()
				mt.Topic, mt.ErrorCode = rt.Topic, kerr.TopicAuthorizationFailed.Code
				resp.Topics = append(resp.Topics, mt)
				continue
			}
			t = byName[*rt.Topic]
		}
		if t != nil {
			resp.Topics = append(resp.Topics, s.metadataTopic(topo, t))
			continue
		}
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic, mt.ErrorCode = rt.Topic, kerr.UnknownTopicOrPartition.Code
		if rt.Topic == nil {
			mt.ErrorCode = kerr.InvalidTopicException.Code
		} else if r.Version < 4 || r.AllowAutoTopicCreation {
			err := s.opts.Core.AutoCreateTopic(ctx, *rt.Topic)
			if err == nil {
				// Kafka answers a topic it just created with
				// LEADER_NOT_AVAILABLE: the client asks again once the
				// leaders are elected.
				mt.ErrorCode = kerr.LeaderNotAvailable.Code
			} else if k := kafkaError(err); k != kerr.UnknownTopicOrPartition {
				mt.ErrorCode = k.Code
			}
		}
		resp.Topics = append(resp.Topics, mt)
	}
	return resp
}

// metadataBrokers are the brokers a client may connect to: on the Kafka
// listener every live broker with a Kafka listener, on the gateway this
// broker at the gateway's address.
func (s *Server) metadataBrokers(topo api.Topology) []kmsg.MetadataResponseBroker {
	if s.opts.Mode == Gateway {
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID = s.opts.NodeID
		b.Host, b.Port = splitHostPort(s.opts.Advertised)
		return []kmsg.MetadataResponseBroker{b}
	}
	out := make([]kmsg.MetadataResponseBroker, 0, len(topo.Brokers))
	for _, be := range topo.Brokers {
		if be.Fenced || be.KafkaAddress == "" {
			continue
		}
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID = be.ID
		b.Host, b.Port = splitHostPort(be.KafkaAddress)
		if be.Rack != "" {
			rack := be.Rack
			b.Rack = &rack
		}
		out = append(out, b)
	}
	return out
}

// metadataTopic is one topic of a Metadata reply.
func (s *Server) metadataTopic(topo api.Topology, t *api.TopicPlacement) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	name := t.Name
	mt.Topic, mt.IsInternal = &name, t.Internal
	if id, err := uuid.Parse(t.TopicID); err == nil {
		mt.TopicID = id
	}
	reachable := map[int32]bool{}
	for _, b := range topo.Brokers {
		reachable[b.ID] = !b.Fenced && b.KafkaAddress != ""
	}
	for _, p := range t.Partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition, mp.Leader, mp.LeaderEpoch = p.Partition, p.Leader, p.LeaderEpoch
		mp.Replicas, mp.ISR, mp.OfflineReplicas = p.Replicas, p.ISR, p.Offline
		if mp.OfflineReplicas == nil {
			mp.OfflineReplicas = []int32{}
		}
		switch {
		case p.Leader == api.NoLeader || !reachable[p.Leader]:
			mp.Leader, mp.ErrorCode = -1, kerr.LeaderNotAvailable.Code
		case s.opts.Mode == Gateway:
			// The gateway leads everything it can pass on; the replicas
			// it names are itself, the one broker the client knows.
			self := []int32{s.opts.NodeID}
			mp.Leader, mp.Replicas, mp.ISR, mp.OfflineReplicas = s.opts.NodeID, self, self, []int32{}
		}
		mt.Partitions = append(mt.Partitions, mp)
	}
	return mt
}

// splitHostPort splits an advertised host:port (checked when the broker
// started).
func splitHostPort(addr string) (string, int32) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 0
	}
	n, _ := strconv.ParseInt(port, 10, 32)
	return host, int32(n)
}
