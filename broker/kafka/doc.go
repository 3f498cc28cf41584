// Package kafka is the broker's Kafka wire-protocol front door: a listener
// that Kafka's own clients (franz-go, librdkafka and kcat, kafkajs, the Java
// client and its tools) talk to unchanged. It translates only: every request
// is decoded with github.com/twmb/franz-go/pkg/kmsg (generated from Kafka's
// message specs), handed to the broker core as the core's own request type,
// and the core's result is encoded back with Kafka's error codes. It holds
// no state of its own beyond one connection's.
//
// # Layout
//
// conn.go is the framing layer: a request is a 4-byte size and that many
// bytes, whose header holds the API key and version, the correlation id, the
// client id and, in flexible versions, tagged fields; the reply is the size,
// the correlation id, the flexible tags (except for ApiVersions, whose reply
// header is always v0 so that a client that does not yet know the broker's
// versions can read it) and the body. One file per API (00_produce.go,
// 01_fetch.go, …, named by API key as in Kafka's specs) registers its
// handler with the versions it serves (apis.go) next to its code.
//
// # Versions
//
// A broker advertises, in ApiVersions, low minimums and every version kmsg
// can decode up to its maximum: librdkafka (kcat) enables a feature only when
// the broker's range overlaps the old versions the feature needs, and
// kafkajs sends its own maximum whatever the broker's. The exceptions are
// Produce below v3 and Fetch below v4, which carry Kafka's older message
// formats (magic 0 and 1): the log stores only record batches (magic 2), as
// Kafka 4 does. A request whose key or version the broker does not serve is
// answered, not dropped: with the ApiVersions v0 reply carrying
// UNSUPPORTED_VERSION and the versions it does serve, which is what Kafka
// answers an ApiVersions request newer than it knows (KIP-511) and the one
// reply any client can read whatever it asked.
//
// # Security
//
// A listener may run over TLS (Options.TLS) and authenticate its clients
// (Options.Security): by client certificate, whose common name is the
// principal, or by SASL (SCRAM-SHA-512, and PLAIN over TLS) checked
// against the users of the metadata quorum. sasl.go runs the exchange
// before any other request, one frame at a time, as Kafka's
// SaslServerAuthenticator does. With authorization on, the handlers reach
// the core through authorize.go's Core, which checks each topic, group and
// cluster a call touches against the principal's ACLs and answers Kafka's
// *_AUTHORIZATION_FAILED codes in the reply's place for that resource; the
// handlers themselves know nothing of it (Metadata alone asks whether a
// named topic may be described). On the gateway the check runs here, with
// the client's principal, before the core passes a request on.
//
// # Limits
//
// A frame larger than socket.request.max.bytes closes the connection before
// a byte of its body is read, as Kafka's SocketServer does. Below that, the
// frame and what it decodes to are charged to the broker's request memory
// pool (queued.max.request.bytes, broker/memory) before they are read, and a
// connection whose frame does not fit waits (stops reading) until memory is
// free, as Kafka mutes a channel when its memory pool is exhausted. Requests
// on one connection are answered in order, one at a time, as Kafka's
// SocketServer does: an idempotent producer's in-flight batches reach a
// partition in the order they were sent.
package kafka
