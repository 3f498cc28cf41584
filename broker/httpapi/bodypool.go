package httpapi

import (
	"math/bits"
	"sync"
)

// Request bodies are read into buffers kept for the next request, by size
// class (powers of two from firstBodyBuffer): a body grows through a
// buffer of each class up to its own size, and a batched produce is
// hundreds of kilobytes, so fresh buffers cost the broker that reads it
// zeroing and faulting in twice its body for every request.
//
// A buffer a body grew out of goes back at once: its bytes were copied to
// the next one and nothing points into it. The buffer a body ends in goes
// back only where its handler knows nothing points into it any more:
// the fast produce parser's strings, and so the records' keys, values and
// header keys, share it (produce releases it once every record was stored
// and its answer written; anything else leaves it to the collector).

const (
	firstBodyClass = 12 // log2(firstBodyBuffer)
	bodyClasses    = 13 // firstBodyBuffer up to 16 MiB, DefaultMaxBodyBytes
)

// bodyBuffers are the kept buffers; the zero value is ready.
type bodyBuffers struct {
	classes [bodyClasses]sync.Pool // of *[]byte, each of its class's size
}

// bodies are every server's body buffers.
var bodies bodyBuffers

// bodyClass is the class of the smallest buffers that hold n bytes; a
// class beyond the last means buffers of that size are not kept.
func bodyClass(n int) int {
	return max(bits.Len(uint(n-1)), firstBodyClass) - firstBodyClass
}

// get returns an empty buffer of at least n bytes: its class's size, or
// n when that class is not kept.
func (p *bodyBuffers) get(n int) []byte {
	c := bodyClass(n)
	if c >= bodyClasses {
		return make([]byte, 0, n)
	}
	if b, ok := p.classes[c].Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, 1<<(firstBodyClass+c))
}

// put keeps b for a later get. The caller must not use b, or anything
// that shares its memory, again.
func (p *bodyBuffers) put(b []byte) {
	c := bodyClass(cap(b))
	if c >= bodyClasses || cap(b) != 1<<(firstBodyClass+c) {
		return // not one of get's
	}
	b = b[:0]
	p.classes[c].Put(&b)
}
