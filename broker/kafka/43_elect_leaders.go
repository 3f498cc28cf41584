package kafka

import (
	"context"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// ElectLeaders v0–2 (kafka-leader-election, kadm's ElectLeaders) with the
// preferred election type: the partitions named, or every partition when
// the topics are null, are led by their preferred replicas again where
// those are alive and in sync, through the controller, within the
// request's timeout. Each partition named is answered: no error,
// ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE or
// UNKNOWN_TOPIC_OR_PARTITION; for every partition, only those it had to
// elect, as Kafka answers. Unclean elections are INVALID_REQUEST: a
// replica out of sync leads only under unclean.leader.election.enable,
// when no in-sync replica is alive. Authorization: Alter on the cluster.
func init() { register(43, 0, 2, (*Server).electLeaders) }

// electionTypePreferred is ElectLeaders' election type 0; v0 knows no
// other.
const electionTypePreferred = 0

func (s *Server) electLeaders(ctx context.Context, req *request) kmsg.Response {
	r := req.body.(*kmsg.ElectLeadersRequest)
	resp := r.ResponseKind().(*kmsg.ElectLeadersResponse)
	var tps []api.TopicPartition
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			tps = append(tps, api.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	fail := func(e *kerr.Error, msg string) kmsg.Response {
		// v0 has no top-level error: every partition named carries it.
		if r.Version >= 1 {
			resp.ErrorCode = e.Code
		}
		for _, tp := range tps {
			answer(resp, tp, e.Code, &msg)
		}
		return resp
	}
	if r.ElectionType != electionTypePreferred {
		return fail(kerr.InvalidRequest, "only preferred elections are served; an unclean election happens on its own under unclean.leader.election.enable")
	}
	if r.Topics != nil && len(tps) == 0 {
		return resp // nothing named
	}
	if r.TimeoutMillis > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(r.TimeoutMillis)*time.Millisecond)
		defer cancel()
	}
	elections, err := s.opts.Core.ElectPreferredLeaders(ctx, tps)
	if err != nil {
		return fail(kafkaError(err), err.Error())
	}
	for _, e := range elections {
		var code int16
		var msg *string
		if e.Code != "" {
			code, msg = errorCode(api.Errorf(e.Code, "%s", e.Error)), &e.Error
		}
		answer(resp, api.TopicPartition{Topic: e.Topic, Partition: e.Partition}, code, msg)
	}
	return resp
}

// answer adds one partition's result to resp, under its topic.
func answer(resp *kmsg.ElectLeadersResponse, tp api.TopicPartition, code int16, msg *string) {
	i := slices.IndexFunc(resp.Topics, func(t kmsg.ElectLeadersResponseTopic) bool { return t.Topic == tp.Topic })
	if i < 0 {
		t := kmsg.NewElectLeadersResponseTopic()
		t.Topic = tp.Topic
		resp.Topics = append(resp.Topics, t)
		i = len(resp.Topics) - 1
	}
	p := kmsg.NewElectLeadersResponseTopicPartition()
	p.Partition, p.ErrorCode, p.ErrorMessage = tp.Partition, code, msg
	resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, p)
}
