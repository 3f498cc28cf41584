package core

import (
	"context"

	"github.com/kairolog/kairolog/broker/api"
)

// GroupCoordinator is the broker that coordinates a group: the leader of
// the group's __consumer_offsets partition, as this broker's metadata has
// it (Kafka's FindCoordinator). A partition without a leader yet is
// COORDINATOR_NOT_AVAILABLE, for the client to ask again.
func (b *Broker) GroupCoordinator(ctx context.Context, groupID string) (int32, error) {
	if groupID == "" {
		return -1, api.Errorf(api.CodeMissingField, "group is required")
	}
	_, leader, err := b.coordinatorOf(groupID)
	if err != nil {
		return -1, apiError(err)
	}
	if leader < 0 {
		return -1, api.Errorf(api.CodeCoordinatorNotAvailable, "group %q: its %s partition has no leader", groupID, "__consumer_offsets")
	}
	return leader, nil
}
