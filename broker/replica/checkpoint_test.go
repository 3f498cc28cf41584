package replica

import (
	"os"
	"path/filepath"
	"testing"
	"time"
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

// An idle broker's checkpoint looks at no partition: while no high
// watermark moves and the hosted set stays, a checkpoint reads nothing.
// A moved high watermark, a new partition and a removed one are each in
// the next checkpoint.
func TestIdleCheckpointLooksAtNoPartition(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 1, nil)
	for _, topic := range []string{"a", "b", "c"} {
		c.set(PartitionState{Topic: topic, Partition: 0, Replicas: []int32{0}, Leader: 0,
			LeaderEpoch: 1, ISR: []int32{0}, PartitionEpoch: 1})
		waitLeader(t, bs[0], topic)
	}
	m := bs[0].manager()
	checkpointed := func() map[partitionKey]int64 {
		t.Helper()
		m.checkpointHWs()
		hws, err := readHWCheckpoint(m.cfg.DataDir)
		if err != nil {
			t.Fatal(err)
		}
		return hws
	}

	produce(t, bs[0], "a", recordsOf("x", 3), AcksAll)
	if hw := checkpointed()[partitionKey{"a", 0}]; hw != 3 {
		t.Fatalf("checkpointed high watermark %d, want 3", hw)
	}
	gathered := m.hwsGathered.Load()
	for range 3 {
		checkpointed()
	}
	if n := m.hwsGathered.Load() - gathered; n != 0 {
		t.Errorf("three idle checkpoints read %d high watermarks, want 0", n)
	}

	produce(t, bs[0], "b", recordsOf("y", 2), AcksAll)
	if hw := checkpointed()[partitionKey{"b", 0}]; hw != 2 {
		t.Errorf("checkpointed high watermark %d after it moved, want 2", hw)
	}
	c.set(PartitionState{Topic: "d", Partition: 0, Replicas: []int32{0}, Leader: 0,
		LeaderEpoch: 1, ISR: []int32{0}, PartitionEpoch: 1})
	waitLeader(t, bs[0], "d")
	if _, ok := checkpointed()[partitionKey{"d", 0}]; !ok {
		t.Error("a new partition is not in the checkpoint")
	}
	c.remove("c", 0)
	eventually(t, 5*time.Second, "c-0 removed", func() bool {
		_, ok := checkpointed()[partitionKey{"c", 0}]
		return !ok
	})
}
