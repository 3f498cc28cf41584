package client

import (
	"math"
	"testing"
)

// TestNextSequence: a producer's sequence counts a partition's records and
// wraps from MaxInt32 to 0, as the broker's producer state counts them
// (storage.lastSequence), so a producer past two billion records in one
// partition keeps being in sequence.
func TestNextSequence(t *testing.T) {
	tests := []struct {
		seq  int32
		n    int
		want int32
	}{
		{0, 1, 1},
		{5, 3, 8},
		{math.MaxInt32 - 1, 1, math.MaxInt32},
		{math.MaxInt32, 1, 0},
		{math.MaxInt32 - 2, 5, 2},
		{math.MaxInt32, 100000, 99999},
	}
	for _, tt := range tests {
		if got := nextSequence(tt.seq, tt.n); got != tt.want {
			t.Errorf("nextSequence(%d, %d) = %d, want %d", tt.seq, tt.n, got, tt.want)
		}
	}
}
