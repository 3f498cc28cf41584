package replica

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/storage"
)

// TestNewLeaderDeduplicates: the followers build the producer state from
// the batches they copy, so after a leader change the new leader answers
// the producer's retries of batches the old leader wrote with their
// offsets, refuses a gap, and takes the next batch.
func TestNewLeaderDeduplicates(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", map[string]string{"min.insync.replicas": "2"})
	waitLeader(t, bs[0], "orders")
	send := func(b *testBroker, seq int32, n int) (storage.AppendResult, error) {
		batch := Batch{Records: recordsOf("r", n), Options: storage.BatchOptions{Producer: &storage.Producer{ID: 11, Epoch: 0, BaseSequence: seq}}}
		return b.manager().ProduceBatch(context.Background(), "orders", 0, batch, AcksAll, 10*time.Second)
	}
	var sent []storage.AppendResult
	seq := int32(0)
	for _, n := range []int{1, 3, 2, 5, 1, 4} {
		res, err := send(bs[0], seq, n)
		if err != nil || res.Duplicate {
			t.Fatalf("sequence %d: %+v, %v", seq, res, err)
		}
		sent = append(sent, res)
		seq += int32(n)
	}
	// The old leader answers a retry without writing.
	if res, err := send(bs[0], seq-4, 4); err != nil || !res.Duplicate || res != (storage.AppendResult{BaseOffset: sent[5].BaseOffset, LastOffset: sent[5].LastOffset, Duplicate: true}) {
		t.Fatalf("retry on the leader: %+v, %v", res, err)
	}

	c.update("orders", 0, func(s *PartitionState) { s.Leader = 1; s.LeaderEpoch++ })
	waitLeader(t, bs[1], "orders")
	end := info(t, bs[1], "orders").LogEndOffset
	// Retries of the last five batches: their offsets, nothing written.
	seq = 1
	for i, n := range []int{3, 2, 5, 1, 4} {
		res, err := send(bs[1], seq, n)
		if err != nil || !res.Duplicate || res.BaseOffset != sent[i+1].BaseOffset || res.LastOffset != sent[i+1].LastOffset {
			t.Fatalf("retry of batch %d on the new leader: %+v, %v; first sent %+v", i+1, res, err, sent[i+1])
		}
		seq += int32(n)
	}
	if _, err := send(bs[1], seq+1, 1); !errors.Is(err, storage.ErrOutOfOrderSequence) {
		t.Fatalf("a gap on the new leader: %v", err)
	}
	if got := info(t, bs[1], "orders").LogEndOffset; got != end {
		t.Fatalf("retries and a refused batch moved the log end from %d to %d", end, got)
	}
	if res, err := send(bs[1], seq, 2); err != nil || res.Duplicate || res.BaseOffset != end {
		t.Fatalf("the next batch on the new leader: %+v, %v; want offset %d", res, err, end)
	}
	// Every replica holds each record once.
	eventually(t, 10*time.Second, "the replicas to agree", func() bool {
		return len(readAll(t, bs[1], "orders")) == 18 && info(t, bs[0], "orders").LogEndOffset == 18 && info(t, bs[2], "orders").LogEndOffset == 18
	})
}
