package broker

import (
	"context"
	"strings"
	"time"

	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/group"
)

// coordinatorLookupWait bounds how long a group request waits for
// __consumer_offsets to exist and its partition to have a leader (right
// after the cluster starts).
const coordinatorLookupWait = 10 * time.Second

// onCoordinator runs a group request where the group lives: local on this
// broker's coordinator of the group's __consumer_offsets partition, or
// remote against the broker that leads that partition. A request that was
// itself forwarded is never forwarded again.
func (b *Broker) onCoordinator(ctx context.Context, groupID string, local func(*group.Coordinator) error, remote func(*client.Client) error) error {
	if strings.TrimSpace(groupID) == "" {
		return client.Errorf(client.CodeMissingField, "group is required")
	}
	deadline := time.Now().Add(coordinatorLookupWait)
	if IsForwarded(ctx) {
		// The forwarding broker saw this one coordinate the group: give
		// this broker's image the moment it needs to show the same.
		if t := b.image().Topic(offsetsTopic); t != nil && len(t.Partitions) > 0 {
			b.awaitLeadership(ctx, offsetsTopic, groupPartition(groupID, int32(len(t.Partitions))))
		}
	}
	for {
		partition, leader, err := b.coordinatorOf(groupID)
		switch {
		case err == nil && leader == b.id:
			c, err := b.coords.get(ctx, partition)
			if err != nil {
				return err
			}
			return apiError(local(c))
		case err == nil && leader >= 0 && !IsForwarded(ctx):
			pc, err := b.peer(leader)
			if err != nil {
				return err
			}
			if t := b.image().Topic(offsetsTopic); t != nil && int(partition) < len(t.Partitions) {
				pc = withEpoch(pc, int32(t.Partitions[partition].LeaderEpoch))
			}
			return peerError(remote(pc), client.CodeCoordinatorNotAvailable, leader)
		case err == nil && leader >= 0:
			return coordinatorNotAvailable("broker %d coordinates group %q; this request was already forwarded", leader, groupID)
		}
		if time.Now().After(deadline) {
			if err != nil {
				return err
			}
			return coordinatorNotAvailable("partition %d of %s has no leader", partition, offsetsTopic)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// coordinatorOf finds the group's partition and its leader (-1 for none).
func (b *Broker) coordinatorOf(groupID string) (partition int32, leader int32, err error) {
	img := b.image()
	t := img.Topic(offsetsTopic)
	if t == nil || len(t.Partitions) == 0 {
		return 0, -1, coordinatorNotAvailable("%s does not exist yet", offsetsTopic)
	}
	partition = groupPartition(groupID, int32(len(t.Partitions)))
	return partition, int32(t.Partitions[partition].Leader), nil
}

func toClientMembers(ms []group.Member) []client.Member {
	out := make([]client.Member, len(ms))
	for i, m := range ms {
		t := m.LastSeen.UTC()
		out[i] = client.Member{ID: m.ID, LastSeen: &t}
	}
	return out
}

func toClientTPs(tps []group.TopicPartitions) []client.TopicPartitions {
	out := make([]client.TopicPartitions, len(tps))
	for i, tp := range tps {
		out[i] = client.TopicPartitions{Topic: tp.Topic, Partitions: nonNilInts(tp.Partitions)}
	}
	return out
}

func toClientAssignments(as []group.Assignment) []client.Assignment {
	out := make([]client.Assignment, len(as))
	for i, a := range as {
		out[i] = client.Assignment{MemberID: a.MemberID, Topics: toClientTPs(a.Topics)}
	}
	return out
}

func nonNilInts(xs []int32) []int32 {
	if xs == nil {
		return []int32{}
	}
	return xs
}
