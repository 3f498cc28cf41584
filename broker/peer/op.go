package peer

import "strings"

// PathPrefix is where the peer listener serves operations: an Op named
// "replica/fetch" is POST /internal/replica/fetch.
const PathPrefix = "/internal/"

// StreamPath is where a peer asks for a stream (stream.go): a request
// with "Upgrade: kairo-peer-stream/1" that is answered 101 Switching
// Protocols, after which the connection carries frames, not HTTP.
const StreamPath = PathPrefix + "stream"

// streamProtocol names the stream protocol in the Upgrade header.
const streamProtocol = "kairo-peer-stream/1"

// Op is one typed broker-to-broker operation: Req is sent as JSON, Resp
// comes back as JSON, each plus raw bytes when it implements Payload.
type Op[Req, Resp any] struct{ name string }

// NewOp names an operation; the name is its path under PathPrefix.
func NewOp[Req, Resp any](name string) Op[Req, Resp] {
	if name == "" || strings.HasPrefix(name, "/") {
		panic("peer: bad operation name " + name)
	}
	return Op[Req, Resp]{name: name}
}

// Name is the operation's name.
func (o Op[Req, Resp]) Name() string { return o.name }

func (o Op[Req, Resp]) path() string { return PathPrefix + o.name }

// Payload is implemented (on the pointer) by a request or reply that
// carries raw bytes besides its JSON fields, such as a replica fetch's
// record batches or a forwarded produce's records: they travel after the
// JSON as they are, not base64 inside it.
type Payload interface {
	PeerPayload() []byte
	SetPeerPayload([]byte)
}
