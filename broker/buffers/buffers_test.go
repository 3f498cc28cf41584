package buffers

import "testing"

// TestPoolByClass: Get hands out a buffer of its class's size, Put
// keeps only buffers Get hands out, and sizes beyond the last class are
// made to measure and never kept.
func TestPoolByClass(t *testing.T) {
	var p Pool
	for _, c := range []struct{ n, cap int }{
		{1, 4 << 10}, {4 << 10, 4 << 10}, {4<<10 + 1, 8 << 10},
		{230_001, 256 << 10}, {1 << 20, 1 << 20}, {1<<20 + 1, 1<<20 + 1}, {16 << 20, 16 << 20},
	} {
		if b := p.Get(c.n); len(b) != 0 || cap(b) != c.cap || Size(c.n) != c.cap {
			t.Errorf("Get(%d): len %d cap %d, Size %d; want 0, %d and %d", c.n, len(b), cap(b), Size(c.n), c.cap, c.cap)
		}
	}
	p.Put(make([]byte, 0, 2<<20)) // beyond the last class: dropped
	if b := p.Get(2 << 20); cap(b) != 2<<20 {
		t.Errorf("Get(2 MiB) after putting one: cap %d", cap(b))
	}
	kept := p.Get(100 << 10)
	kept = append(kept, "kept"...)
	p.Put(kept)
	p.Put(make([]byte, 100<<10)) // not a class's size: dropped
	// sync.Pool may drop what it was given, never hand out a wrong size.
	for range 4 {
		if b := p.Get(65<<10 + 1); len(b) != 0 || cap(b) != 128<<10 {
			t.Fatalf("Get after Put: len %d cap %d", len(b), cap(b))
		}
	}
}
