package replica

import "github.com/kairolog/kairolog/broker/buffers"

// followerReads are the buffers a leader reads batches into for its
// followers' fetch sessions. A reply's payload is hundreds of kilobytes
// under load, read fresh for every reply; kept buffers spare zeroing and
// faulting them in. A reply gives its buffers back once the peer layer
// has written it (sessionReply.ReleasePeerPayload).
var followerReads buffers.Pool

// readBuffers are the buffers one reply's batches were read into.
type readBuffers struct {
	held [][]byte
}

// alloc gives a buffer of n bytes and holds it for release.
func (r *readBuffers) alloc(n int) []byte {
	b := followerReads.Get(n)
	r.held = append(r.held, b)
	return b[:n]
}

// join appends b to the reply's batches so far: in place when they have
// room (they are this reply's own), into a held buffer otherwise.
func (r *readBuffers) join(batches, b []byte) []byte {
	if len(batches) == 0 {
		return b
	}
	if len(batches)+len(b) <= cap(batches) {
		return append(batches, b...)
	}
	joined := r.alloc(len(batches) + len(b))[:0]
	return append(append(joined, batches...), b...)
}

// release gives the buffers back. Nothing may read the batches after.
func (r *readBuffers) release() {
	if r == nil {
		return
	}
	for _, b := range r.held {
		followerReads.Put(b)
	}
	r.held = nil
}
