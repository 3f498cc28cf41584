package peer

import (
	"context"
	"strconv"
)

// The header set of the peer transport.
const (
	// HeaderForwarded marks a request one broker passes on for another
	// (an operation for the controller that reached a broker that is not
	// the controller). The receiver answers it or refuses it, and never
	// passes it on again, so two brokers with different views cannot
	// bounce a request between them.
	HeaderForwarded = "X-Kairo-Forwarded"
	// HeaderLeaderEpoch carries, on a client request proxied to another
	// broker, the leader epoch of the partition it is about (for a group
	// request, the group's __consumer_offsets partition) as the forwarding
	// broker saw it, so the receiver can tell whether its own metadata is
	// behind.
	HeaderLeaderEpoch = "X-Kairo-Leader-Epoch"
	// headerAuthorization carries "Bearer <cluster secret>".
	headerAuthorization = "Authorization"
)

type forwardedKey struct{}

type leaderEpochKey struct{}

// WithForwarded marks ctx as serving a request another broker passed on.
// Such a request is answered locally or refused, never passed on again.
func WithForwarded(ctx context.Context) context.Context {
	return context.WithValue(ctx, forwardedKey{}, true)
}

// IsForwarded reports whether ctx serves a request another broker passed
// on (a proxied client request, or an operation forwarded once).
func IsForwarded(ctx context.Context) bool {
	v, _ := ctx.Value(forwardedKey{}).(bool)
	return v
}

// WithLeaderEpoch records on ctx the leader epoch a proxied request
// arrived with (HeaderLeaderEpoch); the Mux puts it there.
func WithLeaderEpoch(ctx context.Context, epoch int32) context.Context {
	return context.WithValue(ctx, leaderEpochKey{}, epoch)
}

// LeaderEpoch is the epoch WithLeaderEpoch recorded, if any.
func LeaderEpoch(ctx context.Context) (int32, bool) {
	e, ok := ctx.Value(leaderEpochKey{}).(int32)
	return e, ok
}

func parseEpoch(v string) (int32, bool) {
	e, err := strconv.ParseInt(v, 10, 32)
	return int32(e), err == nil
}
