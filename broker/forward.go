package broker

import "context"

type forwardedKey struct{}

// WithForwarded marks ctx as serving a request another broker proxied here.
// Such a request is answered locally or refused, never proxied again, so two
// brokers with different views of leadership cannot bounce it between them.
func WithForwarded(ctx context.Context) context.Context {
	return context.WithValue(ctx, forwardedKey{}, true)
}

// IsForwarded reports whether ctx serves a proxied request.
func IsForwarded(ctx context.Context) bool {
	v, _ := ctx.Value(forwardedKey{}).(bool)
	return v
}

type forwarderEpochKey struct{}

// WithForwarderEpoch records on a forwarded request's ctx the leader epoch
// the forwarding broker saw for the partition the request is about.
func WithForwarderEpoch(ctx context.Context, epoch int32) context.Context {
	return context.WithValue(ctx, forwarderEpochKey{}, epoch)
}

// forwarderEpoch is the epoch WithForwarderEpoch recorded, if any.
func forwarderEpoch(ctx context.Context) (int32, bool) {
	e, ok := ctx.Value(forwarderEpochKey{}).(int32)
	return e, ok
}
