package core

import (
	"context"
	"strings"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/coordinators"
	"github.com/kairolog/kairolog/broker/group"
	"github.com/kairolog/kairolog/broker/peer"
)

// coordinatorLookupWait bounds how long a group request waits for
// __consumer_offsets to exist and its partition to have a leader (right
// after the cluster starts).
const coordinatorLookupWait = 10 * time.Second

// groupOp is a group request and where it runs: on the group's
// coordinator, this broker's or, passed on over the peer transport as op,
// the one of the broker that leads the group's __consumer_offsets
// partition.
type groupOp[Req, Resp any] struct {
	op    peer.Op[Req, Resp]
	group func(Req) string
	local func(ctx context.Context, c *group.Coordinator, req Req) (Resp, error)
}

func newGroupOp[Req, Resp any](name string, group func(Req) string,
	local func(context.Context, *group.Coordinator, Req) (Resp, error)) groupOp[Req, Resp] {
	return groupOp[Req, Resp]{op: peer.NewOp[Req, Resp]("core/group/" + name), group: group, local: local}
}

// run runs req on the group's coordinator.
func (o groupOp[Req, Resp]) run(ctx context.Context, b *Broker, req Req) (Resp, error) {
	var out Resp
	err := b.onCoordinator(ctx, o.group(req),
		func(c *group.Coordinator) (err error) {
			out, err = o.local(ctx, c, req)
			return err
		},
		func(leader, epoch int32) (err error) {
			out, err = forward(ctx, b, leader, epoch, o.op, req, api.CodeCoordinatorNotAvailable)
			return err
		})
	return out, err
}

// serve answers op on the peer listener: a request another broker passed
// on, run here or refused.
func (o groupOp[Req, Resp]) serve(m *peer.Mux, b *Broker) {
	peer.Handle(m, o.op, served(b, func(ctx context.Context, req Req) (Resp, error) { return o.run(ctx, b, req) }))
}

// onCoordinator runs a group request where the group lives: local on this
// broker's coordinator of the group's __consumer_offsets partition, or
// remote on the broker that leads that partition. A request that was
// itself forwarded is never forwarded again.
func (b *Broker) onCoordinator(ctx context.Context, groupID string, local func(*group.Coordinator) error, remote func(leader, epoch int32) error) error {
	if strings.TrimSpace(groupID) == "" {
		return api.Errorf(api.CodeMissingField, "group is required")
	}
	deadline := time.Now().Add(coordinatorLookupWait)
	if IsForwarded(ctx) {
		// The forwarding broker saw this one coordinate the group: give
		// this broker's image the moment it needs to show the same.
		if t := b.image().Topic(coordinators.Topic); t != nil && len(t.Partitions) > 0 {
			b.awaitLeadership(ctx, coordinators.Topic, coordinators.Partition(groupID, int32(len(t.Partitions))))
		}
	}
	for {
		partition, leader, err := b.coordinatorOf(groupID)
		switch {
		case err == nil && leader == b.id:
			c, err := b.coords.Get(ctx, partition)
			if err != nil {
				return err
			}
			return apiError(local(c))
		case err == nil && leader >= 0 && !IsForwarded(ctx):
			epoch := int32(-1)
			if t := b.image().Topic(coordinators.Topic); t != nil && int(partition) < len(t.Partitions) {
				epoch = int32(t.Partitions[partition].LeaderEpoch)
			}
			return remote(leader, epoch)
		case err == nil && leader >= 0:
			return coordinators.NotAvailable("broker %d coordinates group %q; this request was already forwarded", leader, groupID)
		}
		if time.Now().After(deadline) {
			if err != nil {
				return err
			}
			return coordinators.NotAvailable("partition %d of %s has no leader", partition, coordinators.Topic)
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
	t := img.Topic(coordinators.Topic)
	if t == nil || len(t.Partitions) == 0 {
		return 0, -1, coordinators.NotAvailable("%s does not exist yet", coordinators.Topic)
	}
	partition = coordinators.Partition(groupID, int32(len(t.Partitions)))
	return partition, int32(t.Partitions[partition].Leader), nil
}
