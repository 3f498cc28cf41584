package metadata

import (
	"fmt"
	"math"
	"slices"
)

// Apply returns the image that results from cmd, logged at raft index.
// It is deterministic and does no I/O: every replica of the metadata log
// computes the same image. A command that fails validation returns img
// itself and an error wrapping one of the package's sentinels.
func (img *Image) Apply(cmd Command, index uint64) (*Image, error) {
	next := img.clone()
	if err := next.apply(cmd, index); err != nil {
		return img, err
	}
	next.Index = index
	next.owned = nil
	return next, nil
}

func (img *Image) apply(c Command, index uint64) error {
	missing := fmt.Errorf("%w: %s without payload", ErrInvalidCommand, c.Type)
	switch c.Type {
	case CmdInitCluster:
		if c.InitCluster == nil {
			return missing
		}
		if img.ClusterID == "" {
			img.ClusterID = c.InitCluster.ClusterID
		}
		return nil
	case CmdRegisterBroker:
		if c.RegisterBroker == nil {
			return missing
		}
		return img.register(*c.RegisterBroker, index)
	case CmdCreateTopic:
		if c.CreateTopic == nil {
			return missing
		}
		return img.createTopic(*c.CreateTopic)
	case CmdDeleteTopic:
		if c.DeleteTopic == nil {
			return missing
		}
		if err := img.changeableTopic(c.DeleteTopic.Name, "deleted"); err != nil {
			return err
		}
		if id := c.DeleteTopic.ID; id != "" && img.Topics[c.DeleteTopic.Name].ID != id {
			return fmt.Errorf("%w: %q with id %s", ErrUnknownTopic, c.DeleteTopic.Name, id)
		}
		delete(img.Topics, c.DeleteTopic.Name)
		return nil
	case CmdCreatePartitions:
		if c.CreatePartitions == nil {
			return missing
		}
		return img.createPartitions(*c.CreatePartitions)
	case CmdAlterConfig:
		if c.AlterConfig == nil {
			return missing
		}
		return img.alterConfig(*c.AlterConfig)
	case CmdAlterISR:
		if c.AlterISR == nil {
			return missing
		}
		return img.alterISR(*c.AlterISR)
	case CmdElectLeaders:
		if c.ElectLeaders == nil {
			return missing
		}
		img.electLeaders(*c.ElectLeaders)
		return nil
	case CmdReassign:
		if c.Reassign == nil {
			return missing
		}
		return img.reassign(c.Reassign.Moves)
	case CmdAllocateIDs:
		if c.AllocateIDs == nil {
			return missing
		}
		return img.allocateIDs(*c.AllocateIDs)
	case CmdPutUser:
		if c.PutUser == nil {
			return missing
		}
		return img.putUser(*c.PutUser)
	case CmdDeleteUser:
		if c.DeleteUser == nil {
			return missing
		}
		return img.deleteUser(c.DeleteUser.Name)
	}
	if c.Broker == nil {
		return missing
	}
	id := c.Broker.ID
	if img.Brokers[id] == nil {
		return fmt.Errorf("%w: %d", ErrUnknownBroker, id)
	}
	switch c.Type {
	case CmdFenceBroker:
		img.fence(id, false)
	case CmdControlledStop:
		img.fence(id, true)
	case CmdUnfenceBroker:
		img.writableBroker(id).Fenced = false
		img.electLeaders(ElectLeaders{})
	case CmdDrain:
		img.writableBroker(id).Draining = true
	case CmdCancelDrain:
		img.cancelDrain(id)
	case CmdRemoveBroker:
		if n := img.ReplicaCount(id); n > 0 {
			return fmt.Errorf("%w: broker %d holds %d replicas", ErrBrokerNotEmpty, id, n)
		}
		delete(img.Brokers, id)
	default:
		return fmt.Errorf("%w: unknown type %q", ErrInvalidCommand, c.Type)
	}
	return nil
}

func (img *Image) register(r RegisterBroker, index uint64) error {
	if r.ID < 0 {
		return fmt.Errorf("%w: broker id %d", ErrInvalidCommand, r.ID)
	}
	if old := img.Brokers[r.ID]; old != nil && !old.Fenced && old.Incarnation != r.Incarnation {
		img.endIncarnation(r.ID, r.Heard)
	}
	b := &Broker{}
	if old := img.Brokers[r.ID]; old != nil {
		*b = *old
	}
	b.ID, b.HTTPAddress, b.PeerAddress, b.RaftAddress, b.Rack, b.Voter = r.ID, r.HTTPAddress, r.PeerAddress, r.RaftAddress, r.Rack, r.Voter
	b.KafkaAddress = r.KafkaAddress
	b.Epoch, b.Incarnation = index, r.Incarnation
	b.Fenced, b.ShuttingDown = false, false
	img.Brokers[r.ID] = b
	img.electLeaders(ElectLeaders{})
	return nil
}

// fence takes broker id out of every ISR it is in (unless it is the last
// member, so that it can lead again cleanly when it returns) and moves its
// leaderships to other live ISR members.
func (img *Image) fence(id int, shutdown bool) {
	b := img.writableBroker(id)
	b.Fenced = true
	if shutdown {
		b.ShuttingDown = true
	}
	img.eachPartition(func(t *Topic, p *Partition) {
		if p.Leader != id && !p.InISR(id) {
			return
		}
		q := p.copy()
		if len(q.ISR) > 1 {
			q.ISR = without(q.ISR, []int{id})
		}
		img.reelect(t, q)
		img.commit(t.Name, p, q)
	})
}

func (img *Image) cancelDrain(id int) {
	img.writableBroker(id).Draining = false
	img.eachPartition(func(t *Topic, p *Partition) {
		if !slices.Contains(p.Removing, id) {
			return
		}
		orig := without(p.Replicas, p.Adding)
		// Best effort: a partition whose ISR holds only new replicas keeps moving.
		_ = img.reassignOne(t, p, orig)
	})
}

// eachPartition calls fn for every partition, topics in name order, on
// the partition values current at the time of the call.
func (img *Image) eachPartition(fn func(t *Topic, p *Partition)) {
	for _, name := range img.TopicNames() {
		for i := range img.Topics[name].Partitions {
			t := img.Topics[name]
			fn(t, t.Partitions[i])
		}
	}
}

// commit stores q, the edited copy of orig, bumping the epochs: the
// partition epoch on any change, the leader epoch on a leader change.
func (img *Image) commit(topic string, orig, q *Partition) {
	if orig.equal(q) {
		return
	}
	q.PartitionEpoch = orig.PartitionEpoch + 1
	q.LeaderEpoch = orig.LeaderEpoch
	if q.Leader != orig.Leader {
		q.LeaderEpoch = orig.LeaderEpoch + 1
	}
	img.setPartition(topic, q)
}

// allocateIDs hands the block [a.From, a.From+a.Count) of producer ids
// out, if it is the next one.
func (img *Image) allocateIDs(a AllocateIDs) error {
	switch {
	case a.Count < 1 || a.Count > maxProducerIDBlock:
		return fmt.Errorf("%w: a block of %d producer ids", ErrInvalidCommand, a.Count)
	case a.From != img.NextProducerID:
		return fmt.Errorf("%w: block from %d, the next id is %d", ErrStaleProducerIDs, a.From, img.NextProducerID)
	case a.From > math.MaxInt64-a.Count:
		return fmt.Errorf("%w: producer ids exhausted", ErrInvalidCommand)
	}
	img.NextProducerID = a.From + a.Count
	return nil
}
