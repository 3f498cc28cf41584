package metadata

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kairolog/kairolog/broker/topicconfig"
)

func (img *Image) createTopic(c CreateTopic) error {
	if err := ValidateTopicName(c.Name, c.Internal); err != nil {
		return err
	}
	if img.Topics[c.Name] != nil {
		return fmt.Errorf("%w: %q", ErrTopicExists, c.Name)
	}
	if c.ID == "" {
		return fmt.Errorf("%w: topic without id", ErrInvalidCommand)
	}
	if len(c.Assignments) == 0 {
		return fmt.Errorf("%w: a topic needs at least one partition", ErrInvalidPartitions)
	}
	if err := validateStoredConfig(c.Config); err != nil {
		return err
	}
	rf := len(c.Assignments[0])
	t := &Topic{Name: c.Name, ID: c.ID, Internal: c.Internal, Config: maps.Clone(c.Config)}
	for i, a := range c.Assignments {
		p, err := img.newPartition(t, i, a, rf)
		if err != nil {
			return err
		}
		t.Partitions = append(t.Partitions, p)
	}
	img.Topics[c.Name] = t
	img.owned[c.Name] = true
	return nil
}

// changeableTopic is nil when the topic exists and is not internal; what
// says what the refused change would have done.
func (img *Image) changeableTopic(name, what string) error {
	t := img.Topics[name]
	if t == nil {
		return fmt.Errorf("%w: %q", ErrUnknownTopic, name)
	}
	return RefuseInternal(t, what)
}

// RefuseInternal is ErrInternalTopic for an internal topic: its config,
// partition count and existence are the brokers' own. Apply checks it for
// every such command, so no path (HTTP, a controller call, a raft entry)
// gets around it; callers check it first to answer before proposing.
func RefuseInternal(t *Topic, what string) error {
	if t != nil && t.Internal {
		return fmt.Errorf("%w: %q is managed by the brokers and cannot be %s", ErrInternalTopic, t.Name, what)
	}
	return nil
}

func (img *Image) createPartitions(c CreatePartitions) error {
	if err := img.changeableTopic(c.Topic, "given more partitions"); err != nil {
		return err
	}
	old := img.Topics[c.Topic]
	if c.FromPartitions > 0 && len(old.Partitions) != c.FromPartitions {
		return fmt.Errorf("%w: %q has %d partitions, not the %d this change was planned from",
			ErrStalePartitionCount, c.Topic, len(old.Partitions), c.FromPartitions)
	}
	rf := old.ReplicationFactor()
	t := img.writableTopic(c.Topic)
	for _, a := range c.Assignments {
		p, err := img.newPartition(t, len(t.Partitions), a, rf)
		if err != nil {
			return err
		}
		t.Partitions = append(t.Partitions, p)
	}
	return nil
}

// newPartition builds partition id of t on the replicas of assignment a:
// the ISR is the live replicas (all of them when none is live, so the
// first to come back leads cleanly) and the leader the first live one.
func (img *Image) newPartition(t *Topic, id int, a []int, rf int) (*Partition, error) {
	if err := img.validateReplicas(a); err != nil {
		return nil, fmt.Errorf("partition %d: %w", id, err)
	}
	if len(a) != rf {
		return nil, fmt.Errorf("%w: partition %d has %d replicas, the topic %d",
			ErrInvalidReplicationFactor, id, len(a), rf)
	}
	p := &Partition{ID: id, Replicas: slices.Clone(a), Leader: NoLeader}
	for _, r := range a {
		if img.Live(r) {
			p.ISR = append(p.ISR, r)
		}
	}
	if len(p.ISR) == 0 {
		p.ISR = slices.Clone(a)
	}
	img.reelect(t, p)
	return p, nil
}

// validateReplicas checks a replica list: non-empty, no duplicates, every
// broker registered.
func (img *Image) validateReplicas(a []int) error {
	if len(a) == 0 {
		return fmt.Errorf("%w: no replicas", ErrInvalidReplicationFactor)
	}
	for i, r := range a {
		if img.Brokers[r] == nil {
			return fmt.Errorf("%w: replica on unknown broker %d", ErrInvalidAssignment, r)
		}
		if slices.Contains(a[:i], r) {
			return fmt.Errorf("%w: broker %d listed twice", ErrInvalidAssignment, r)
		}
	}
	return nil
}

func (img *Image) alterConfig(c AlterConfig) error {
	if err := img.changeableTopic(c.Topic, "reconfigured"); err != nil {
		return err
	}
	cfg := map[string]string{}
	if !c.Replace {
		maps.Copy(cfg, img.Topics[c.Topic].Config)
		for _, k := range c.Delete {
			delete(cfg, k)
		}
	}
	maps.Copy(cfg, c.Set)
	if err := validateStoredConfig(cfg); err != nil {
		return err
	}
	for _, k := range c.Delete {
		if _, known := topicconfig.Lookup(k); !known {
			return fmt.Errorf("%w: unknown key %q", ErrInvalidConfig, k)
		}
	}
	if len(cfg) == 0 {
		cfg = nil
	}
	img.writableTopic(c.Topic).Config = cfg
	// Allowing unclean election may give leaderless partitions a leader.
	if UncleanElection(img.Topics[c.Topic]) {
		img.electLeaders(ElectLeaders{})
	}
	return nil
}
