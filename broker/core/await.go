package core

import (
	"context"
	"errors"
	"time"

	"github.com/kairolog/kairolog/broker/api"
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

// awaitLeader waits until this broker's replica of topic-p serves as
// leader, or until it has applied a leadership of another broker that the
// image now shows too, and reports whether either happened: asking the
// replica again then either succeeds or names the leader to proxy to. The
// second case is a broker that restarted on an old image naming it leader:
// its replicas lead nothing until the metadata has caught up, and the
// caught-up image may name another leader.
func (b *Broker) awaitLeader(ctx context.Context, topic string, p int32) bool {
	ctx, cancel := context.WithTimeout(ctx, replicaCatchUpWait)
	defer cancel()
	for {
		if info, err := b.replicas.PartitionInfo(topic, p); err == nil && (info.IsLeader || b.ledElsewhere(info)) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// ledElsewhere reports whether a replica follows another leader in an epoch
// at least as new as the one the image shows.
func (b *Broker) ledElsewhere(info replica.PartitionInfo) bool {
	t := b.image().Topic(info.Topic)
	if t == nil || int(info.Partition) >= len(t.Partitions) || info.Leader < 0 || info.Leader == b.id {
		return false
	}
	part := t.Partitions[info.Partition]
	return int32(part.Leader) == info.Leader && info.LeaderEpoch >= int32(part.LeaderEpoch)
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

// metadataCatchUpWait bounds how long a forwarded request waits for this
// broker's image to show what the forwarding broker's image showed (a topic
// just created, a leadership just moved here): images reach brokers a few
// milliseconds apart.
const metadataCatchUpWait = 2 * time.Second

// awaitLeadership waits, for a forwarded request whose forwarding broker saw
// this broker lead topic-p, until this broker's image shows that too or
// metadataCatchUpWait passes, and returns the image it saw last. It waits
// only while this broker's image is behind the forwarding broker's: the
// topic or partition is missing, or the partition's leader epoch is older
// than the one the forwarder sent (peer.HeaderLeaderEpoch). When this
// broker's image is the newer one, the request is answered at once (its
// client retries with the leader it names).
func (b *Broker) awaitLeadership(ctx context.Context, topic string, p int32) *metadata.Image {
	img := b.image()
	if !IsForwarded(ctx) {
		return img
	}
	behind := func(img *metadata.Image) bool {
		t := img.Topic(topic)
		if t == nil || p < 0 || int(p) >= len(t.Partitions) {
			return true
		}
		part := t.Partitions[p]
		if int32(part.Leader) == b.id {
			return false
		}
		epoch, ok := forwarderEpoch(ctx)
		return ok && int32(part.LeaderEpoch) < epoch
	}
	if !behind(img) {
		return img
	}
	ctx, cancel := context.WithTimeout(ctx, metadataCatchUpWait)
	defer cancel()
	for behind(img) {
		select {
		case <-ctx.Done():
			return img
		case <-time.After(5 * time.Millisecond):
		}
		img = b.image()
	}
	return img
}

// metadataReadyWait bounds how long a request waits for a starting
// broker's metadata to catch up. A single broker catches up a few tens of
// milliseconds after it starts, a restarted member of a cluster once it
// has registered and replayed what it missed; a wait longer than this
// means the quorum has no controller, and the client should retry later.
const metadataReadyWait = 5 * time.Second

// metadataRetryAfterMs is the retry hint of a NOT_READY answer.
const metadataRetryAfterMs = 1000

// AwaitMetadata returns nil once this broker's metadata has caught up with
// the quorum, waiting for that at most metadataReadyWait (and while ctx
// lasts). Every request that reads the metadata waits here first: before
// it, the image of a starting broker lacks topics and brokers that exist,
// and answering from it would say something false (no live brokers for a
// new topic, an existing topic unknown). After the wait the answer is 503
// NOT_READY, which clients retry.
func (b *Broker) AwaitMetadata(ctx context.Context) error {
	err := b.node.MetadataCurrent()
	if err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, metadataReadyWait)
	defer cancel()
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for err != nil {
		select {
		case <-ctx.Done():
			e := api.Errorf(api.CodeNotReady, "%v", err)
			e.RetryAfterMs = metadataRetryAfterMs
			return e
		case <-t.C:
		}
		err = b.node.MetadataCurrent()
	}
	return nil
}
