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
// # Streams
//
// A Client carries its calls to a broker on one long-lived stream, not one
// HTTP request each (stream.go): it asks for it with an HTTP/1.1 upgrade
// to StreamPath carrying the secret, and the connection then carries
// frames — a call (id, operation, the forwarding headers, the body HTTP
// would carry) and its reply (id, status, body), concurrently and in any
// order, several queued frames in one write. The StreamServer in front of
// the Mux serves each call as the HTTP request it stands for, so an
// operation, its errors and everything wrapping the Mux behave the same
// on either wire; a caller that stops waiting cancels its call, and one
// that waited long for a stream that brought nothing back drops it
// (streamSilenceLimit). A broker
// that answers the upgrade with anything but 101 (one from before streams)
// is called over HTTP. A stream costs a call about half the CPU time of an
// HTTP request (BenchmarkCall), and a follower's fetch sessions and the
// forwarded produces are such calls, several per record.
//
// # Bodies
//
// A request or reply is JSON, or JSON and raw bytes after it (Payload: a
// fetch's batches, a forwarded produce's records). A message that also
// has a binary encoding of its own (Binary, encoding.go; the fetch session
// and the forwarded produces, with package binwire) travels in it on a
// stream whose server says it reads binary bodies when it accepts the
// stream, and its reply comes back in binary; on plain HTTP, and to a
// broker from before binary bodies, it is JSON.
//
// The Mux is a plain http.Handler and the Client an http.Client with its
// own transport, so TLS (mutual TLS from the operator's CA) wraps the peer
// listener with tls.NewListener and the client transport with a TLS
// config, and nothing about the operations changes.
package peer
