// Package peer is the one transport between brokers. Everything a broker
// asks another — the controller's operations (registration, heartbeats,
// topic and ISR changes), a follower's replica fetches and epoch-end
// lookups, a coordinator's view of partition offsets, describe's view of
// partition sizes, and the core's requests passed on to the broker that
// can answer them (the partition leader, the group coordinator) — goes
// through it, on the peer listener (--peer-listen,
// port 9094 by default), never on a client port.
//
// It has:
//   - typed operations (Op): a request and a reply type under one name,
//     served at /internal/<name> (Handle) and called with Call;
//   - one header set: Authorization (the cluster secret, as a bearer
//     token), X-Kairo-Forwarded (a request passed on once, never again)
//     and X-Kairo-Leader-Epoch (the leader epoch a forwarding broker saw,
//     Forwarded and ForwardedAt);
//   - one code table: errors travel as package api's ErrorBody with api's
//     codes and statuses, and come back as *api.Error, so a code means the
//     same on every wire.
//
// Every request must carry the cluster secret; one without it, or with
// another, is answered 401 UNAUTHENTICATED before any handler runs.
//
// The Mux is a plain http.Handler and the Client an http.Client with its
// own transport, so TLS (mutual TLS from the operator's CA) wraps the peer
// listener with tls.NewListener and the client transport with a TLS
// config, and nothing about the operations changes.
package peer
