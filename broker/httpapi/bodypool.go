package httpapi

import "github.com/kairolog/kairolog/broker/buffers"

// Request bodies are read into buffers kept for the next request, by size
// class (buffers.Pool): a body grows through a buffer of each class up
// to its own size, and a batched produce is hundreds of kilobytes, so
// fresh buffers cost the broker that reads it zeroing and faulting in
// twice its body for every request. Only a body that announces a length
// within the kept classes (up to 1 MiB) uses them: a larger one, or one
// without a length, is rare, and a flood of them would fill the pool with
// memory no other body reuses (test/hostile's peak grew by a tenth).
//
// A buffer a body grew out of goes back at once: its bytes were copied to
// the next one and nothing points into it. The buffer a body ends in goes
// back only where its handler knows nothing points into it any more:
// the fast produce parser's strings, and so the records' keys, values and
// header keys, share it (produce releases it once every record was stored
// and its answer written; anything else leaves it to the collector).

// bodies are every server's body buffers.
var bodies buffers.Pool

// bodyBuffers are where one body's buffers come from: bodies when kept,
// made to measure otherwise. The first buffer is always made: a slow
// client's body, stalled after a few bytes, holds it alone, and a flood
// of them is better left to the collector than kept.
type bodyBuffers struct{ kept bool }

func (b bodyBuffers) keeps(n int) bool { return b.kept && n > firstBodyBuffer }

func (b bodyBuffers) size(n int) int {
	if b.keeps(n) {
		return buffers.Size(n)
	}
	return n
}

func (b bodyBuffers) get(n int) []byte {
	if b.keeps(n) {
		return bodies.Get(n)
	}
	return make([]byte, 0, n)
}

func (b bodyBuffers) put(buf []byte) {
	if b.keeps(cap(buf)) {
		bodies.Put(buf)
	}
}

// releaseBody gives back the buffer a body ended in, once nothing points
// into it.
func releaseBody(raw []byte) {
	bodyBuffers{kept: true}.put(raw)
}
