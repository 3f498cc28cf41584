package cluster

import (
	"context"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// Preferred-leader elections on request: Kafka's ElectLeaders with the
// preferred election type (kafka-leader-election --election-type
// preferred). The controller also runs them on its own every
// LeaderRebalanceInterval, unless that is negative; a request moves
// leaderships back now, and says per partition what happened.

// ElectPreferredRequest names the partitions whose preferred replica (the
// first of its replicas) should lead; none names every partition.
type ElectPreferredRequest struct {
	Partitions []metadata.TopicPartition `json:"partitions,omitempty"`
}

// ElectionOutcome is what a preferred-leader election did to a partition.
type ElectionOutcome string

const (
	// Elected: the preferred replica leads now.
	Elected ElectionOutcome = "elected"
	// ElectionNotNeeded: it already led.
	ElectionNotNeeded ElectionOutcome = "not_needed"
	// PreferredNotAvailable: it cannot lead now (not live, not in the
	// ISR, draining or being removed); the leader stays.
	PreferredNotAvailable ElectionOutcome = "not_available"
	// ElectionUnknownTopic and ElectionUnknownPartition: nothing to elect.
	ElectionUnknownTopic     ElectionOutcome = "unknown_topic"
	ElectionUnknownPartition ElectionOutcome = "unknown_partition"
)

// Election is one partition's outcome and its leader afterwards
// (metadata.NoLeader when it has none or does not exist).
type Election struct {
	Topic     string          `json:"topic"`
	Partition int             `json:"partition"`
	Leader    int             `json:"leader"`
	Outcome   ElectionOutcome `json:"outcome"`
}

var opElectPreferred = defineOp("elect-preferred", (*Node).electPreferred)

// ElectPreferred moves the leadership of the partitions named (every
// partition when none are) to their preferred replicas where those can
// lead, in one metadata command, and answers each partition named in the
// order named. Asked for every partition, it answers only those it had to
// elect, as Kafka does.
func (n *Node) ElectPreferred(ctx context.Context, partitions []metadata.TopicPartition) ([]Election, error) {
	return opElectPreferred.call(n, ctx, ElectPreferredRequest{Partitions: partitions})
}

func (n *Node) electPreferred(ctx context.Context, req ElectPreferredRequest) ([]Election, error) {
	if _, err := n.controller(); err != nil {
		return nil, err
	}
	img := n.Image()
	all := len(req.Partitions) == 0
	tps := req.Partitions
	if all {
		for _, name := range img.TopicNames() {
			for i := range img.Topics[name].Partitions {
				tps = append(tps, metadata.TopicPartition{Topic: name, Partition: i})
			}
		}
	}
	out := make([]Election, len(tps))
	var candidates []int // indexes into tps and out
	for i, tp := range tps {
		e := Election{Topic: tp.Topic, Partition: tp.Partition, Leader: metadata.NoLeader}
		p := img.Partition(tp.Topic, tp.Partition)
		switch {
		case img.Topics[tp.Topic] == nil:
			e.Outcome = ElectionUnknownTopic
		case p == nil:
			e.Outcome = ElectionUnknownPartition
		case p.Leader == p.Replicas[0]:
			e.Leader, e.Outcome = p.Leader, ElectionNotNeeded
		default:
			candidates = append(candidates, i)
		}
		out[i] = e
	}
	if len(candidates) > 0 {
		elect := make([]metadata.TopicPartition, len(candidates))
		for j, i := range candidates {
			elect[j] = tps[i]
		}
		if _, err := n.apply(ctx, metadata.Command{Type: metadata.CmdElectLeaders,
			ElectLeaders: &metadata.ElectLeaders{Preferred: true, Partitions: elect}}); err != nil {
			return nil, err
		}
	}
	after := n.Image()
	for _, i := range candidates {
		e := &out[i]
		switch p := after.Partition(e.Topic, e.Partition); {
		case p == nil: // deleted meanwhile
			e.Outcome = ElectionUnknownTopic
		case p.Leader == p.Replicas[0]:
			e.Leader, e.Outcome = p.Leader, Elected
		default:
			e.Leader, e.Outcome = p.Leader, PreferredNotAvailable
		}
	}
	if !all {
		return out, nil
	}
	kept := out[:0]
	for _, e := range out {
		if e.Outcome != ElectionNotNeeded {
			kept = append(kept, e)
		}
	}
	return kept, nil
}
