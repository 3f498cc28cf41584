package core

import (
	"bytes"
	"runtime"
	"testing"
)

// TestForwardedSectionsReusedOnceAnswered: the buffer records were passed
// on in goes back to be reused once the leader has answered the request
// that carried them, and not when the request failed (it may still be on
// its way out).
func TestForwardedSectionsReusedOnceAnswered(t *testing.T) {
	// One P: the buffer given back is the one the next Get finds.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	sent := func(many bool) bool {
		leader, addr, f := forwarderTo(t, many)
		out := forwardInBackground(f, addr, 4, 1000)
		if many {
			leader.waitRequests(t, 1)
			leader.release <- struct{}{}
		}
		if o := <-out; o.err != nil || len(o.positions) != 1000 {
			t.Fatalf("forwarded produce: %d positions, %v", len(o.positions), o.err)
		}
		b := forwardedSections.Get(27_000) // forwardedSize of the 1000 records
		defer forwardedSections.Put(b)
		return bytes.Contains(b[:cap(b)], []byte("t-4"))
	}
	if !sent(true) {
		t.Error("the records' buffer was not given back once the leader answered")
	}
	// A leader without opProduceMany answers NOT_FOUND, and each produce
	// goes again alone: the failed request's buffer is left alone.
	if sent(false) {
		t.Error("the records' buffer was given back after its request failed")
	}
}
