package broker

import (
	"context"
	"errors"
	"time"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
	"github.com/kairolog/kairolog/broker/replica"
)

// replicaCatchUpWait bounds how long a request waits for the replica
// manager to apply a metadata change this broker's image already shows
// (a partition just created, a leadership just moved here).
const replicaCatchUpWait = 5 * time.Second

// lagging reports an error that means the replica manager has not yet
// applied the image that made this broker the partition's leader. The
// image is the newer word: the leader a lagging replica names is the one
// before the election, possibly a broker that is gone.
func (b *Broker) lagging(err error, topic string, p int32) bool {
	var nl *replica.NotLeaderError
	if !errors.Is(err, replica.ErrUnknownPartition) && !errors.As(err, &nl) {
		return false
	}
	t := b.image().Topic(topic)
	return t != nil && int(p) < len(t.Partitions) && int32(t.Partitions[p].Leader) == b.id
}

// awaitLeader waits until this broker's replica of topic-p serves as leader.
func (b *Broker) awaitLeader(ctx context.Context, topic string, p int32) bool {
	ctx, cancel := context.WithTimeout(ctx, replicaCatchUpWait)
	defer cancel()
	for {
		if info, err := b.replicas.PartitionInfo(topic, p); err == nil && info.IsLeader {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// awaitLocalLeaders waits for the partitions of t this broker leads, so a
// produce right after creating a topic finds them open.
func (b *Broker) awaitLocalLeaders(ctx context.Context, t *metadata.Topic) {
	for _, p := range t.Partitions {
		if int32(p.Leader) == b.id && !b.awaitLeader(ctx, t.Name, int32(p.ID)) {
			return
		}
	}
}
