package replica

import (
	"context"
	"testing"
	"time"
)

// A new leader whose followers have not yet fetched from it holds a high
// watermark below the start of its epoch, where its log ended at election:
// LeaderOffsets says both, so that a latest-offset request can tell that
// the high watermark may be below records already written (KIP-207).
func TestNewLeaderReportsItsEpochStartBeyondItsHighWatermark(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	// Broker 2 stays in the ISR but stops fetching: nothing more commits.
	bs[2].stop(t)
	produce(t, bs[0], "orders", recordsOf("uncommitted", 5), AcksLeader)
	eventually(t, 5*time.Second, "broker 1 to copy the records", func() bool {
		return info(t, bs[1], "orders").LogEndOffset == 5
	})

	st := c.update("orders", 0, func(s *PartitionState) { s.Leader = 1; s.LeaderEpoch++ })
	waitLeader(t, bs[1], "orders")
	o, err := bs[1].manager().LeaderOffsets(context.Background(), "orders", 0, st.LeaderEpoch)
	if err != nil {
		t.Fatal(err)
	}
	if o.EpochStartOffset != 5 || o.HighWatermark >= o.EpochStartOffset {
		t.Fatalf("new leader's offsets %+v: want the epoch to start at 5, above the high watermark", o)
	}
}
