package httpapi

import "testing"

// TestBodyBuffersByClass: get hands out a buffer of its class's size, put
// keeps only buffers get hands out, and sizes beyond the last class are
// made to measure and never kept.
func TestBodyBuffersByClass(t *testing.T) {
	var p bodyBuffers
	for _, c := range []struct{ n, cap int }{
		{1, firstBodyBuffer}, {firstBodyBuffer, firstBodyBuffer}, {firstBodyBuffer + 1, 2 * firstBodyBuffer},
		{230_001, 256 << 10}, {16 << 20, 16 << 20}, {16<<20 + 1, 16<<20 + 1},
	} {
		if b := p.get(c.n); len(b) != 0 || cap(b) != c.cap {
			t.Errorf("get(%d): len %d cap %d, want 0 and %d", c.n, len(b), cap(b), c.cap)
		}
	}
	kept := p.get(100 << 10)
	kept = append(kept, "kept"...)
	p.put(kept)
	p.put(make([]byte, 100<<10)) // not a class's size: dropped
	// sync.Pool may drop what it was given, never hand out a wrong size.
	for range 4 {
		if b := p.get(65<<10 + 1); len(b) != 0 || cap(b) != 128<<10 {
			t.Fatalf("get after put: len %d cap %d", len(b), cap(b))
		}
	}
}
