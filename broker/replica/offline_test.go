package replica

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/storage"
)

// errLogFailure is what a partition's log returns for every write once an
// fsync of its files failed (storage's Log.Err).
var errLogFailure = fmt.Errorf("%w: fsync failed: orders-0/00000000000000000000.log: %w", storage.ErrLogFailed, syscall.EIO)

func replicaOf(t *testing.T, b *testBroker, topic string) *partition {
	t.Helper()
	p, err := b.manager().partition(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A leader whose log failed stops serving at once and for good: produce,
// consumer fetch and follower fetch get the failure (STORAGE_ERROR), a new
// leadership from the metadata does not bring it back, and a coordinator
// loaded on it is told it lost the leadership.
func TestLeaderWhoseLogFailedGoesOffline(t *testing.T) {
	c := newMemCluster()
	var mu sync.Mutex
	var events []string
	bs := startBrokers(t, c, 3, func(cfg *Config) {
		id := cfg.BrokerID
		cfg.OnLeadershipChange = func(topic string, partition int32, leader bool, epoch int32) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, fmt.Sprintf("%d:%v:%d", id, leader, epoch))
		}
	})
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("a", 3), AcksAll)

	replicaOf(t, bs[0], "orders").checkLog(errLogFailure)
	m := bs[0].manager()
	if _, _, err := m.Produce(context.Background(), "orders", 0, recordsOf("b", 1), AcksLeader, time.Second); !errors.Is(err, storage.ErrLogFailed) {
		t.Errorf("produce to an offline leader: %v, want the log's failure", err)
	}
	if _, err := m.Fetch(context.Background(), "orders", 0, 0, 1<<20, 0, 0); !errors.Is(err, storage.ErrLogFailed) {
		t.Errorf("fetch from an offline leader: %v, want the log's failure", err)
	}
	q := replicaRequest("orders", 1)
	q["replica_id"], partitionOf(q)["fetch_offset"] = 1, 3
	status, body, reply := internalCall(t, bs[0], q)
	if code, _, _ := answerCode(reply, "orders"); status != http.StatusOK || code != "STORAGE_ERROR" {
		t.Errorf("follower fetch from an offline leader: %d %+v, answer %q, want STORAGE_ERROR", status, body, code)
	}
	if i := info(t, bs[0], "orders"); !i.Offline || i.IsLeader {
		t.Errorf("offline leader's info: %+v, want Offline and not leader", i)
	}

	// Elected again in a new epoch: still offline.
	c.update("orders", 0, func(s *PartitionState) { s.Leader = 1 })
	c.update("orders", 0, func(s *PartitionState) { s.Leader = 0 })
	time.Sleep(100 * time.Millisecond)
	if i := info(t, bs[0], "orders"); !i.Offline || i.IsLeader {
		t.Errorf("offline replica elected again: %+v, want still offline", i)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(events, "0:false:1") {
		t.Errorf("leadership events %v: want broker 0 to report the loss of epoch 1", events)
	}
}

// A follower whose log failed stops fetching; the leader shrinks it out of
// the ISR after the lag time, and acks=all goes on without it.
func TestFollowerWhoseLogFailedLeavesTheISR(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, func(cfg *Config) { cfg.ReplicaLagTimeMax = 300 * time.Millisecond })
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("a", 3), AcksAll)
	eventually(t, 5*time.Second, "broker 2 to copy the records", func() bool {
		return info(t, bs[2], "orders").LogEndOffset == 3
	})

	replicaOf(t, bs[2], "orders").checkLog(errLogFailure)
	eventually(t, 5*time.Second, "the offline follower to leave the ISR", func() bool {
		return slices.Equal(c.state("orders", 0).ISR, []int32{0, 1})
	})
	produce(t, bs[0], "orders", recordsOf("b", 2), AcksAll)
	time.Sleep(100 * time.Millisecond)
	if i := info(t, bs[2], "orders"); !i.Offline || i.LogEndOffset != 3 {
		t.Errorf("offline follower: %+v, want offline at log end 3", i)
	}
}
