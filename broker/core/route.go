package core

import (
	"context"
	"errors"
	"net/http"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/memory"
	"github.com/kairolog/kairolog/broker/peer"
)

// Routing: a request that belongs to another broker (the partition's
// leader, the group's coordinator) is passed on once over the peer
// transport, as the same core request under a peer operation, and run
// there by the same core method. The receiving broker sees it forwarded
// and answers it itself or refuses it, never passing it on again, so two
// brokers with different views of leadership cannot bounce a request
// between them.

// IsForwarded reports whether ctx serves a request another broker passed
// on here over the peer transport.
func IsForwarded(ctx context.Context) bool { return peer.IsForwarded(ctx) }

type localKey struct{}

// Local marks ctx for a request that this broker answers itself or
// refuses, never passing it on: one for a partition it does not lead is
// NOT_LEADER naming the leader it knows (api.Error's Leader and
// LeaderEpoch). A client that routes by metadata (Kafka's) wants that
// answer, which makes it refresh its metadata, rather than a hop through
// this broker.
func Local(ctx context.Context) context.Context { return context.WithValue(ctx, localKey{}, true) }

func isLocal(ctx context.Context) bool { v, _ := ctx.Value(localKey{}).(bool); return v }

// notLeader is the NOT_LEADER answer of a Local request for a partition
// broker leader leads in epoch.
func notLeader(topic string, p, leader, epoch int32) error {
	e := api.Errorf(api.CodeNotLeader, "broker %d leads %s-%d", leader, topic, p)
	e.Leader, e.LeaderEpoch = &leader, &epoch
	return e
}

// forwarderEpoch is the leader epoch the forwarding broker saw for the
// partition a forwarded request is about (for a group request, the
// group's __consumer_offsets partition), if it sent one.
func forwarderEpoch(ctx context.Context) (int32, bool) { return peer.LeaderEpoch(ctx) }

// peerAddress is where broker id's peer listener is.
func (b *Broker) peerAddress(id int32) (string, error) {
	br := b.image().Broker(int(id))
	if br == nil || br.PeerAddress == "" {
		return "", leaderNotAvailable("broker %d has no known peer address", id)
	}
	return br.PeerAddress, nil
}

// forward runs op on broker id as a forwarded request, naming the leader
// epoch this broker saw. A failure to reach id is answered with code (see
// peerError).
func forward[Req, Resp any](ctx context.Context, b *Broker, id, epoch int32, op peer.Op[Req, Resp], req Req, code string) (Resp, error) {
	addr, err := b.peerAddress(id)
	if err != nil {
		var zero Resp
		return zero, err
	}
	resp, err := peer.Call(ctx, b.peerClient, addr, op, req, peer.ForwardedAt(epoch))
	return resp, peerError(err, code, id)
}

// peerError turns a failure to reach broker id (it stopped, the connection
// broke) into code, a retriable 503 of the request being passed on,
// instead of an internal error; an answer the peer gave and the caller's
// own deadline pass through.
func peerError(err error, code string, id int32) error {
	if api.IsCode(err, api.CodeUnauthenticated) {
		// A deployment fault, not the client's: the brokers hold different
		// cluster secrets. Retriable, as the brokers are being fixed.
		e := api.Errorf(code, "broker %d refused this broker's cluster secret: %v", id, err)
		e.RetryAfterMs = 1000
		return e
	}
	var ae *api.Error
	if err == nil || errors.As(err, &ae) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	e := api.Errorf(code, "broker %d did not answer: %v", id, err)
	e.RetryAfterMs = 500
	return e
}

// peerAnswer is what a peer operation of this package answers for err: the
// *api.Error a front door would answer, so a forwarded request fails with
// the code a local one would. An error without a code is left for the Mux
// to answer as INTERNAL (a bug).
func peerAnswer(err error) error {
	if err == nil {
		return nil
	}
	err = apiError(err)
	var ae *api.Error
	if errors.As(err, &ae) {
		return ae
	}
	return err
}

// served is a core method as a peer operation's handler: the request runs,
// forwarded, once this broker's metadata has caught up, and its error is
// answered with its code.
func served[Req, Resp any](b *Broker, run func(context.Context, Req) (Resp, error)) func(context.Context, Req) (Resp, error) {
	return func(ctx context.Context, req Req) (Resp, error) {
		// Whatever its headers say, a core request on the peer listener
		// was passed on by another broker.
		ctx = peer.WithForwarded(ctx)
		if err := b.AwaitMetadata(ctx); err != nil {
			var zero Resp
			return zero, err
		}
		resp, err := run(ctx, req)
		return resp, peerAnswer(err)
	}
}

func leaderNotAvailable(format string, args ...any) error {
	e := api.Errorf(api.CodeLeaderNotAvailable, format, args...)
	e.RetryAfterMs = 500
	return e
}

func int32s(xs []int) []int32 {
	out := make([]int32, len(xs))
	for i, x := range xs {
		out[i] = int32(x)
	}
	return out
}

func ints(xs []int32) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}

// PeerHandler is the handler of the peer listener: the controller's,
// the replicas' and this package's operations on the peer transport
// (broker/peer), among them the requests other brokers pass on to this
// one (route.go). Every request must carry the cluster secret. Serve it
// only on the peer listener: the client port never answers these paths.
// Calls arrive as HTTP requests or on peer streams (broker/peer); wrap,
// if given, wraps what serves both, as a test that counts or delays peer
// requests needs.
func (b *Broker) PeerHandler(wrap ...func(http.Handler) http.Handler) http.Handler {
	m := peer.NewMux(b.cfg.PeerSecret, b.log)
	b.node.ServePeer(m)
	b.replicas.ServePeer(m)
	peer.Handle(m, opOffsets, b.serveOffsets)
	peer.Handle(m, opPartitions, b.servePartitions)
	peer.Handle(m, opProduce, served(b, b.serveProduce))
	peer.Handle(m, opProduceRecords, served(b, b.serveProduceRecords))
	peer.Handle(m, opProduceMany, served(b, b.serveProduceMany))
	peer.Handle(m, opFetch, served(b, b.serveFetch))
	peer.Handle(m, opProduceBatch, served(b, b.serveProduceBatch))
	peer.Handle(m, opFetchBatches, served(b, b.serveFetchBatches))
	peer.Handle(m, opListOffset, served(b, b.ListOffset))
	peer.Handle(m, opEpochEndOffset, served(b, b.EpochEndOffset))
	peer.Handle(m, opDeleteRecords, served(b, b.DeleteRecords))
	peer.Handle(m, opListGroups, served(b, func(ctx context.Context, _ struct{}) (api.GroupList, error) {
		return b.ListGroups(ctx)
	}))
	joinGroupOp.serve(m, b)
	syncGroupOp.serve(m, b)
	heartbeatOp.serve(m, b)
	leaveGroupOp.serve(m, b)
	commitOffsetsOp.serve(m, b)
	offsetsOp.serve(m, b)
	describeGroupOp.serve(m, b)
	setGroupConfigOp.serve(m, b)
	resetOffsetsOp.serve(m, b)
	deleteGroupOp.serve(m, b)
	deleteOffsetsOp.serve(m, b)
	seenMemberOp.serve(m, b)
	staleMembersOp.serve(m, b)
	saveAssignmentOp.serve(m, b)
	savedAssignmentOp.serve(m, b)
	deleteAssignmentOp.serve(m, b)
	b.peerMux.Store(m)
	h := withMemoryAccount(m)
	for _, w := range wrap {
		h = w(h)
	}
	streams := peer.NewStreamServer(b.cfg.PeerSecret, h, b.log)
	b.peerStreams.Store(streams)
	return streams
}

// ClosePeerStreams ends the peer streams other brokers hold to this one,
// as closing the peer listener's connections ends their HTTP calls; Close
// does it too.
func (b *Broker) ClosePeerStreams() {
	if s := b.peerStreams.Load(); s != nil {
		s.Close()
	}
}

// withMemoryAccount gives every peer request a memory account, as a front
// door gives a client's: a request passed on from another broker charges
// the budget of the broker that serves it (its records, its fetch reply)
// until its reply is written.
func withMemoryAccount(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		acct := memory.NewAccount(r.ContentLength >= 0 && r.ContentLength <= memory.SmallRequestBytes)
		defer acct.Release()
		h.ServeHTTP(w, r.WithContext(memory.WithAccount(r.Context(), acct)))
	})
}
