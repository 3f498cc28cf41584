// Package buffers keeps byte buffers for reuse, by size class: powers of
// two from 4 KiB to 1 MiB. The brokers' largest buffers each live for one
// request or reply (a produce's body, the records passed on to their
// leader, the batches a leader reads for a follower and the follower
// receives), and fresh ones cost zeroing and faulting in as many bytes
// again every time; a buffer given back once nothing points into it costs
// neither.
//
// A Pool only keeps memory: a buffer's bytes are charged to the memory
// budget (broker/memory) by the request that holds it, like any other.
package buffers

import (
	"math/bits"
	"sync"
)

// Pool is one set of kept buffers; the zero value is ready.
type Pool struct {
	classes [bufferClasses]sync.Pool // of *[]byte, each of its class's size
}

const (
	firstBufferClass = 12 // 4 KiB
	// bufferClasses: 4 KiB up to 1 MiB. Larger buffers (a body near
	// max.request.bytes, a catch-up's fetch reply) are rare and made to
	// measure; kept, a few of them would hold more memory than all the
	// rest.
	bufferClasses = 9
)

// bufferClass is the class of the smallest buffers that hold n bytes; a
// class beyond the last means buffers of that size are not kept.
func bufferClass(n int) int {
	return max(bits.Len(uint(n-1)), firstBufferClass) - firstBufferClass
}

// Kept reports whether buffers of n bytes are kept.
func Kept(n int) bool { return bufferClass(n) < bufferClasses }

// Size is the capacity of the buffer Get(n) returns: what holding it
// costs, to be charged before it is taken.
func Size(n int) int {
	c := bufferClass(n)
	if c >= bufferClasses {
		return n
	}
	return 1 << (firstBufferClass + c)
}

// Get returns an empty buffer of at least n bytes: its class's size, or
// n when that class is not kept.
func (p *Pool) Get(n int) []byte {
	c := bufferClass(n)
	if c >= bufferClasses {
		return make([]byte, 0, n)
	}
	if b, ok := p.classes[c].Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, 1<<(firstBufferClass+c))
}

// Put keeps b for a later Get. The caller must not use b, or anything
// that shares its memory, again. A buffer Get did not hand out (its
// capacity is not a class's size) is left to the collector.
func (p *Pool) Put(b []byte) {
	c := bufferClass(cap(b))
	if c >= bufferClasses || cap(b) != 1<<(firstBufferClass+c) {
		return
	}
	b = b[:0]
	p.classes[c].Put(&b)
}
