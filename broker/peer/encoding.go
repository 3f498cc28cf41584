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
	// AppendPeerBinary appends the message's binary encoding to dst; of a
	// message that is also a Payload, all but the payload, which follows
	// as it is (encodeMessage does not copy it).
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

// message is an encoded request or reply body: head, then tail, the
// message's payload as it is, when it carries one. The payload (replicated
// batches, forwarded records) is not copied into the frame: a stream
// writes both parts with one writev, after the call may have returned, so
// a payload is not written to once it is sent: a reply's is given back
// only once its frame is written (PayloadReleaser), a call's once its
// answer came (the receiver read it whole).
type message struct {
	head, tail []byte
	enc        bodyEncoding
}

func (m message) len() int { return len(m.head) + len(m.tail) }

// bytes is the body in one buffer, for HTTP.
func (m message) bytes() []byte {
	if len(m.tail) == 0 {
		return m.head
	}
	return append(m.head[:len(m.head):len(m.head)], m.tail...)
}

// encodeMessage encodes msg, a pointer to a request or reply: in its
// binary encoding when binaryOK and it has one, otherwise as JSON, framed
// with its payload when it carries one.
func encodeMessage(msg any, binaryOK bool) (message, error) {
	var payload []byte
	p, hasPayload := msg.(Payload)
	if hasPayload {
		payload = p.PeerPayload()
	}
	if b, ok := msg.(Binary); ok && binaryOK {
		return message{head: b.AppendPeerBinary(nil), tail: payload, enc: encBinary}, nil
	}
	js, err := json.Marshal(msg)
	if err != nil {
		return message{}, err
	}
	if hasPayload {
		return message{head: appendFrame(nil, js), tail: payload, enc: encFrame}, nil
	}
	return message{head: js, enc: encJSON}, nil
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

// BinaryBody is the body a stream carries for m in its binary encoding:
// its fields, then its payload if it carries one; what DecodePeerBinary
// reads back.
func BinaryBody(m Binary) []byte {
	b := m.AppendPeerBinary(nil)
	if p, ok := m.(Payload); ok {
		b = append(b, p.PeerPayload()...)
	}
	return b
}
