package replica

import (
	"os"
	"path/filepath"
	"testing"
)

// The high watermark checkpoint is rewritten when a high watermark moved,
// and left as it is (no new file, no fsync) while none did.
func TestCheckpointRewrittenOnlyWhenAHighWatermarkMoved(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 1, nil)
	c.set(PartitionState{Topic: "cp", Partition: 0, Replicas: []int32{0}, Leader: 0,
		LeaderEpoch: 1, ISR: []int32{0}, PartitionEpoch: 1})
	waitLeader(t, bs[0], "cp")
	m := bs[0].manager()
	path := filepath.Join(m.cfg.DataDir, hwCheckpointFile)
	checkpoint := func() (os.FileInfo, int64) {
		t.Helper()
		m.checkpointHWs()
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		hws, err := readHWCheckpoint(m.cfg.DataDir)
		if err != nil {
			t.Fatal(err)
		}
		return st, hws[partitionKey{"cp", 0}]
	}

	produce(t, bs[0], "cp", recordsOf("a", 3), AcksAll)
	first, hw := checkpoint()
	if hw != 3 {
		t.Fatalf("checkpointed high watermark %d, want 3", hw)
	}
	again, _ := checkpoint()
	// Each write renames a new file into place.
	if !os.SameFile(first, again) {
		t.Error("the checkpoint was written again although no high watermark moved")
	}

	produce(t, bs[0], "cp", recordsOf("b", 2), AcksAll)
	if _, hw := checkpoint(); hw != 5 {
		t.Fatalf("checkpointed high watermark %d after it moved, want 5", hw)
	}
}
