package peer

import (
	"encoding/json"
	"fmt"
)

// Binary is implemented (on the pointer) by a request or reply that has a
// binary encoding of its own besides JSON: the replica fetch session and
// the forwarded produces, which every replicated record crosses, where
// decoding JSON cost more than the rest of the call.
//
// A caller sends a Binary request in its binary encoding only on a stream
// whose server said, when it accepted the stream, that it reads binary
// bodies (headerStreamBinary); a server answers in binary only a call that
// came in binary. A broker from before binary bodies, during a rolling
// upgrade, therefore only ever sees JSON, as over HTTP.
type Binary interface {
	// AppendPeerBinary appends the message's binary encoding to dst.
	AppendPeerBinary(dst []byte) []byte
	// DecodePeerBinary decodes src, which the message may keep parts of
	// (a call's or reply's body is its own). Malformed input is an error,
	// never a panic, and never makes it allocate much more than src.
	DecodePeerBinary(src []byte) error
}

// bodyEncoding is how the body of a call or reply is encoded.
type bodyEncoding byte

const (
	encJSON   bodyEncoding = iota
	encFrame               // JSON and a Payload (appendFrame)
	encBinary              // the message's Binary encoding
)

// Content types of the three encodings over HTTP, and in the requests a
// stream server serves its calls as.
const (
	jsonType   = "application/json"
	frameType  = "application/x-kairo-frame"
	binaryType = "application/x-kairo-binary"
)

// headerStreamBinary, in a stream server's 101 answer, says that it reads
// binary bodies.
const headerStreamBinary = "Kairo-Peer-Binary"

func (e bodyEncoding) contentType() string {
	switch e {
	case encFrame:
		return frameType
	case encBinary:
		return binaryType
	}
	return jsonType
}

func encodingOf(contentType string) bodyEncoding {
	switch contentType {
	case frameType:
		return encFrame
	case binaryType:
		return encBinary
	}
	return encJSON
}

// encodeMessage encodes msg, a pointer to a request or reply: in its
// binary encoding when binaryOK and it has one, otherwise as JSON, framed
// with its payload when it carries one.
func encodeMessage(msg any, binaryOK bool) ([]byte, bodyEncoding, error) {
	if b, ok := msg.(Binary); ok && binaryOK {
		var dst []byte
		if p, ok := msg.(Payload); ok && len(p.PeerPayload()) > 0 {
			// Room for the fields and the payload after them: the payload
			// is copied once.
			dst = make([]byte, 0, 256+len(p.PeerPayload()))
		}
		return b.AppendPeerBinary(dst), encBinary, nil
	}
	js, err := json.Marshal(msg)
	if err != nil {
		return nil, encJSON, err
	}
	if p, ok := msg.(Payload); ok {
		return appendFrame(nil, js, p.PeerPayload()), encFrame, nil
	}
	return js, encJSON, nil
}

// decodeMessage decodes raw, encoded as enc, into msg.
func decodeMessage[Msg any](raw []byte, enc bodyEncoding, msg *Msg) error {
	switch enc {
	case encFrame:
		return decodeFrame(raw, msg)
	case encBinary:
		b, ok := any(msg).(Binary)
		if !ok {
			return frameError("a binary body for a message without a binary encoding")
		}
		if err := b.DecodePeerBinary(raw); err != nil {
			return fmt.Errorf("binary body: %w", err)
		}
		return nil
	}
	return json.Unmarshal(raw, msg)
}
