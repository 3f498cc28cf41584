package core

import "testing"

func TestRoundRobinCycles(t *testing.T) {
	var rr roundRobin
	for i := 0; i < 9; i++ {
		if got := rr.pick(3); got != int32(i%3) {
			t.Fatalf("pick %d = %d", i, got)
		}
	}
}
