package replica

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestUnansweredISRExpansionKeepsHoldingTheHighWatermark: the controller
// commits broker 2's return to the ISR but the answer is lost (the
// connection broke) and the metadata is late to say so. Broker 2 then
// stops. The committed ISR names it, so a clean election could make it
// leader: the high watermark must not pass records it lacks, whatever the
// leader learnt. Once the metadata arrives the leader shrinks broker 2
// away as usual and the high watermark moves on.
func TestUnansweredISRExpansionKeepsHoldingTheHighWatermark(t *testing.T) {
	const lag = 500 * time.Millisecond
	c := newMemCluster()
	var loseNext atomic.Bool
	bs := startBrokers(t, c, 3, func(cfg *Config) {
		cfg.ReplicaLagTimeMax = lag
		cfg.ISR = ISRFunc(func(ctx context.Context, req AlterISRRequest) (PartitionState, error) {
			st, err := c.AlterISR(ctx, req)
			if err == nil && loseNext.CompareAndSwap(true, false) {
				return PartitionState{}, fmt.Errorf("alter ISR: connection to the controller broke: %w", io.ErrUnexpectedEOF)
			}
			return st, err
		})
	})
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("a", 5), AcksAll)

	bs[2].stop(t)
	eventually(t, 5*time.Second, "broker 2 to leave the ISR", func() bool {
		return slices.Equal(c.state("orders", 0).ISR, []int32{0, 1})
	})
	produce(t, bs[0], "orders", recordsOf("b", 5), AcksAll)

	// Broker 2 returns; its addition commits, but the leader hears nothing
	// definite about it.
	c.hold(true)
	loseNext.Store(true)
	bs[2].start(t)
	eventually(t, 5*time.Second, "the controller to commit broker 2 back into the ISR", func() bool {
		return slices.Contains(c.state("orders", 0).ISR, 2)
	})
	bs[2].stop(t)

	produce(t, bs[0], "orders", recordsOf("c", 3), AcksLeader)
	eventually(t, 5*time.Second, "broker 1 to copy the new records", func() bool {
		return info(t, bs[1], "orders").LogEndOffset == 13
	})
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if hw := info(t, bs[0], "orders").HighWatermark; hw != 10 {
			t.Fatalf("high watermark %d passed records broker 2 lacks (it has 10), though the committed ISR %v names it",
				hw, c.state("orders", 0).ISR)
		}
	}

	c.hold(false)
	eventually(t, 5*time.Second, "broker 2 to be shrunk away and the high watermark to move on", func() bool {
		return slices.Equal(c.state("orders", 0).ISR, []int32{0, 1}) && info(t, bs[0], "orders").HighWatermark == 13
	})
}
