package replica

import (
	"bytes"
	"runtime"
	"testing"
)

// TestReadBuffersJoinAndGiveBack: a reply's batches of several partitions
// are joined into the buffers it holds, in place while they have room,
// and every buffer it held goes back on release, for the next reply.
func TestReadBuffersJoinAndGiveBack(t *testing.T) {
	// One P: the buffer given back is the one the next Get finds.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var r readBuffers
	first := append(r.alloc(5000)[:0], bytes.Repeat([]byte{'a'}, 5000)...)
	second := append(r.alloc(3000)[:0], bytes.Repeat([]byte{'b'}, 3000)...)
	joined := r.join(r.join(nil, first), second)
	if &joined[0] != &first[0] || len(joined) != 8000 {
		t.Fatalf("joined %d bytes elsewhere than in the first read's buffer (8 KiB of room)", len(joined))
	}
	third := append(r.alloc(4000)[:0], bytes.Repeat([]byte{'c'}, 4000)...)
	joined = r.join(joined, third)
	want := string(bytes.Repeat([]byte{'a'}, 5000)) + string(bytes.Repeat([]byte{'b'}, 3000)) + string(bytes.Repeat([]byte{'c'}, 4000))
	if string(joined) != want {
		t.Fatal("the joined batches are not the reads in order")
	}
	if len(r.held) != 4 {
		t.Fatalf("the reply holds %d buffers, want 4 (three reads, one to join them)", len(r.held))
	}
	r.release()
	if len(r.held) != 0 {
		t.Fatal("buffers still held after release")
	}
	// The 16 KiB buffer the joined batches went into comes back next.
	if b := followerReads.Get(12000); !bytes.Equal(b[:12000], []byte(want)) {
		t.Error("the joined batches' buffer was not given back")
	}
}

// TestAppliedReplyGivesBackItsFrame: a follower gives back the buffer a
// reply was received in once, after applying it, and reads its batches
// no more.
func TestAppliedReplyGivesBackItsFrame(t *testing.T) {
	released := 0
	r := sessionReply{Batches: []byte("batches")}
	r.TakePeerFrame(func() { released++ })
	r.applied()
	r.applied()
	if released != 1 || r.Batches != nil {
		t.Fatalf("released %d times, batches %q left: want once, none", released, r.Batches)
	}
}
