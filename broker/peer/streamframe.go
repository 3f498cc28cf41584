package peer

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/kairolog/kairolog/broker/buffers"
)

// The frames of a peer stream (stream.go). Every frame starts with a
// 4-byte big-endian length of what follows it.
//
//	call    kind=1, id u64, flags u8, leader epoch i32, op name length u16,
//	        op name, body
//	cancel  kind=2, id u64: the caller stopped waiting for call id
//	reply   id u64, status u16, flags u8, body
//
// A body is what the HTTP transport carries for the same call or reply:
// JSON, with flagFrame a payload frame (appendFrame), with flagBinary the
// message's binary encoding (Binary). Call ids are the caller's; replies
// may come in any order.
const (
	frameCall   byte = 1
	frameCancel byte = 2

	flagForwarded   byte = 1 << 0
	flagLeaderEpoch byte = 1 << 1
	flagFrame       byte = 1 << 2
	flagBinary      byte = 1 << 3
)

// Header sizes after the length prefix.
const (
	callHeaderBytes  = 1 + 8 + 1 + 4 + 2
	replyHeaderBytes = 8 + 2 + 1
)

// streamCall is one decoded call or cancel frame.
type streamCall struct {
	kind      byte
	id        uint64
	forwarded bool
	epoch     int32
	hasEpoch  bool
	enc       bodyEncoding
	op        string
	body      []byte
}

// streamReply is one decoded reply frame, and a call's answer over HTTP
// (no id, no frame).
type streamReply struct {
	id     uint64
	status int
	enc    bodyEncoding
	body   []byte
	frame  []byte // the kept buffer body lies in (replyFrames)
}

// callFrame is the header of a call frame carrying a body of bodyLen
// bytes; the body follows it on the wire as it is.
func callFrame(id uint64, op string, o callOptions, enc bodyEncoding, bodyLen int) []byte {
	flags := encodingFlag(enc)
	if o.forwarded {
		flags |= flagForwarded
	}
	if o.hasEpoch {
		flags |= flagLeaderEpoch
	}
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 4+callHeaderBytes+len(op)), uint32(callHeaderBytes+len(op)+bodyLen))
	b = append(b, frameCall)
	b = binary.BigEndian.AppendUint64(b, id)
	b = append(b, flags)
	b = binary.BigEndian.AppendUint32(b, uint32(o.epoch))
	b = binary.BigEndian.AppendUint16(b, uint16(len(op)))
	return append(b, op...)
}

// cancelFrame is a whole cancel frame.
func cancelFrame(id uint64) []byte {
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 13), 9)
	b = append(b, frameCancel)
	return binary.BigEndian.AppendUint64(b, id)
}

// replyFrame is the header of a reply frame carrying a body of bodyLen
// bytes.
func replyFrame(id uint64, status int, enc bodyEncoding, bodyLen int) []byte {
	flags := encodingFlag(enc)
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 4+replyHeaderBytes), uint32(replyHeaderBytes+bodyLen))
	b = binary.BigEndian.AppendUint64(b, id)
	b = binary.BigEndian.AppendUint16(b, uint16(status))
	return append(b, flags)
}

// readFrame reads one frame's bytes after its length prefix; a frame
// longer than limit is an error before anything of it is read, so a peer
// cannot make this side hold more than limit for one frame.
func readFrame(r *bufio.Reader, limit int) ([]byte, error) {
	return readFrameInto(r, limit, nil)
}

// readFrameInto is readFrame into a buffer from kept (nil: one made); the
// frame is its whole length.
func readFrameInto(r *bufio.Reader, limit int, kept *buffers.Pool) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if uint64(size) > uint64(limit) {
		return nil, frameError("stream frame of %d bytes, more than %d", size, limit)
	}
	var buf []byte
	if kept != nil {
		buf = kept.Get(int(size))[:size]
	} else {
		buf = make([]byte, size)
	}
	if _, err := io.ReadFull(r, buf); err != nil {
		if kept != nil {
			kept.Put(buf)
		}
		return nil, err
	}
	return buf, nil
}

// decodeCall decodes a call or cancel frame.
func decodeCall(raw []byte) (streamCall, error) {
	var c streamCall
	if len(raw) < 9 {
		return c, frameError("stream call of %d bytes", len(raw))
	}
	c.kind, c.id = raw[0], binary.BigEndian.Uint64(raw[1:9])
	switch c.kind {
	case frameCancel:
		return c, nil
	case frameCall:
	default:
		return c, frameError("stream frame kind %d", c.kind)
	}
	if len(raw) < callHeaderBytes {
		return c, frameError("stream call of %d bytes", len(raw))
	}
	flags := raw[9]
	c.forwarded, c.hasEpoch = flags&flagForwarded != 0, flags&flagLeaderEpoch != 0
	var err error
	if c.enc, err = flagEncoding(flags); err != nil {
		return c, err
	}
	c.epoch = int32(binary.BigEndian.Uint32(raw[10:14]))
	n := int(binary.BigEndian.Uint16(raw[14:16]))
	if n > len(raw)-callHeaderBytes {
		return c, frameError("op name of %d bytes in a call of %d", n, len(raw))
	}
	c.op, c.body = string(raw[callHeaderBytes:callHeaderBytes+n]), raw[callHeaderBytes+n:]
	return c, nil
}

// decodeReply decodes a reply frame.
func decodeReply(raw []byte) (streamReply, error) {
	if len(raw) < replyHeaderBytes {
		return streamReply{}, frameError("stream reply of %d bytes", len(raw))
	}
	enc, err := flagEncoding(raw[10])
	if err != nil {
		return streamReply{}, err
	}
	return streamReply{id: binary.BigEndian.Uint64(raw[0:8]), status: int(binary.BigEndian.Uint16(raw[8:10])),
		enc: enc, body: raw[replyHeaderBytes:]}, nil
}

// encodingFlag is the flag that says a body is encoded as enc.
func encodingFlag(enc bodyEncoding) byte {
	switch enc {
	case encFrame:
		return flagFrame
	case encBinary:
		return flagBinary
	}
	return 0
}

// flagEncoding is the encoding of a body whose frame has flags.
func flagEncoding(flags byte) (bodyEncoding, error) {
	switch flags & (flagFrame | flagBinary) {
	case 0:
		return encJSON, nil
	case flagFrame:
		return encFrame, nil
	case flagBinary:
		return encBinary, nil
	}
	return encJSON, frameError("a body flagged both framed and binary")
}

// frameWriter writes the frames of one connection: whole frames, never
// interleaved, and those that queue up behind a write in progress all in
// the next one (one writev), which under many concurrent calls saves a
// system call per frame.
type frameWriter struct {
	conn net.Conn

	mu      sync.Mutex
	queue   net.Buffers
	written []func() // of the queued frames, called once they are out
	writing bool
	err     error
}

// write queues a frame, its header and body (kept, not copied, until
// written), and writes the queue unless a write is in progress, whose
// writer writes it next. The error is that of a write this call made:
// the caller closes the connection, and whoever reads it sees the end.
func (w *frameWriter) write(header []byte, body ...[]byte) error {
	return w.writeThen(nil, header, body...)
}

// writeThen is write, then calls written (when not nil) once the frame's
// bytes are no longer read: written to the connection, or dropped when
// the connection failed first.
func (w *frameWriter) writeThen(written func(), header []byte, body ...[]byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		if written != nil {
			written()
		}
		return w.err
	}
	w.queue = append(w.queue, header)
	for _, b := range body {
		if len(b) > 0 {
			w.queue = append(w.queue, b)
		}
	}
	if written != nil {
		w.written = append(w.written, written)
	}
	if w.writing {
		return nil
	}
	w.writing = true
	for len(w.queue) > 0 && w.err == nil {
		q, done := w.queue, w.written
		w.queue, w.written = nil, nil
		w.mu.Unlock()
		_ = w.conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		_, err := q.WriteTo(w.conn)
		for _, f := range done {
			f()
		}
		w.mu.Lock()
		if err != nil {
			w.err = fmt.Errorf("write stream frame: %w", err)
		}
	}
	for _, f := range w.written { // queued behind a failed write: never sent
		f()
	}
	w.writing, w.queue, w.written = false, nil, nil
	return w.err
}
