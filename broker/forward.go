package broker

import (
	"context"

	"github.com/kairolog/kairolog/broker/peer"
)

// IsForwarded reports whether ctx serves a client request another broker
// proxied here over the peer transport (it arrived on the peer listener
// under peer.ForwardPath, never on the client port). Such a request is
// answered locally or refused, never proxied again, so two brokers with
// different views of leadership cannot bounce it between them.
func IsForwarded(ctx context.Context) bool { return peer.IsForwarded(ctx) }

// forwarderEpoch is the leader epoch the forwarding broker saw for the
// partition a forwarded request is about (peer.HeaderLeaderEpoch), if it
// sent one.
func forwarderEpoch(ctx context.Context) (int32, bool) { return peer.LeaderEpoch(ctx) }
