package replica

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/peer"
)

func TestReplicasAreByteIdenticalAfterAConcurrentRun(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", map[string]string{"segment.bytes": "4096"})
	waitLeader(t, bs[0], "orders")

	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acks := AcksLeader
			if w%2 == 0 {
				acks = AcksAll
			}
			for i := range 50 {
				recs := recordsOf(fmt.Sprintf("w%d-%d", w, i), 1+i%3)
				if _, _, err := bs[0].manager().Produce(context.Background(), "orders", 0, recs, acks, 5*time.Second); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	// A consumer follows along and must never read past the HW.
	stop := make(chan struct{})
	consumed := make(chan int64, 1)
	go func() {
		var next int64
		defer func() { consumed <- next }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			res, err := bs[0].manager().Fetch(context.Background(), "orders", 0, next, 4096, 0, 50*time.Millisecond)
			if err != nil {
				t.Error(err)
				return
			}
			for _, r := range res.Records {
				if r.Offset != next || r.Offset >= res.HighWatermark {
					t.Errorf("consumer got offset %d, expected %d below HW %d", r.Offset, next, res.HighWatermark)
					return
				}
				next++
			}
		}
	}()
	wg.Wait()

	leo := info(t, bs[0], "orders").LogEndOffset
	eventually(t, 5*time.Second, "every replica at the leader's end", func() bool {
		for _, b := range bs {
			if i := info(t, b, "orders"); i.LogEndOffset != leo || i.HighWatermark != leo {
				return false
			}
		}
		return true
	})
	eventually(t, 5*time.Second, "the consumer to reach the end", func() bool {
		res, err := bs[0].manager().Fetch(context.Background(), "orders", 0, leo, 1, 0, 0)
		return err == nil && res.HighWatermark == leo
	})
	close(stop)
	if n := <-consumed; n > leo {
		t.Errorf("consumer read %d records of %d", n, leo)
	}
	want := segmentBytes(t, bs[0], "orders")
	if len(want) == 0 {
		t.Fatal("leader has no bytes on disk")
	}
	for _, b := range bs[1:] {
		if got := segmentBytes(t, b, "orders"); !bytes.Equal(got, want) {
			t.Errorf("broker %d segment bytes differ from the leader's (%d vs %d bytes)", b.id, len(got), len(want))
		}
	}
	files := func(b *testBroker) []string {
		names, _ := filepath.Glob(filepath.Join(b.dir, partitionDir("orders", 0), "*.log"))
		for i := range names {
			names[i] = filepath.Base(names[i])
		}
		return names
	}
	if l, f := files(bs[0]), files(bs[1]); len(l) < 2 || fmt.Sprint(l) != fmt.Sprint(f) {
		t.Errorf("segments: leader %v, follower %v (want the same, several)", l, f)
	}
}

// The replica operations' paths on the peer listener.
var (
	pathFetch    = peer.PathPrefix + opFetch.Name()
	pathEpochEnd = peer.PathPrefix + opEpochEnd.Name()
)

// internalCall posts a replica operation to b directly, as a follower
// would, and returns the status and, for an error, its body.
func internalCall(t *testing.T, b *testBroker, path string, req map[string]any) (int, api.ErrorBody) {
	t.Helper()
	body, _ := json.Marshal(req)
	resp, err := testPeer.HTTPClient().Post(b.srv.URL+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var eb api.ErrorBody
	if resp.StatusCode != http.StatusOK {
		json.NewDecoder(resp.Body).Decode(&eb)
	}
	return resp.StatusCode, eb
}

// replicaRequest is a fetch and epoch-end request in one (each operation
// reads its own fields) by follower 2 in epoch.
func replicaRequest(topic string, epoch int) map[string]any {
	return map[string]any{"topic": topic, "partition": 0, "replica_id": 2,
		"leader_epoch": epoch, "fetch_offset": 0, "max_bytes": 1024, "wait_ms": 0, "epoch": 1}
}

func TestInternalAPIRejectsStaleAndFutureEpochs(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	c.update("orders", 0, func(s *PartitionState) { s.Leader = 1 }) // epoch 2
	waitLeader(t, bs[1], "orders")

	for _, tc := range []struct {
		broker  int
		path    string
		epoch   int
		status  int
		code    string
		fetched bool
	}{
		{1, pathFetch, 1, http.StatusConflict, "FENCED_LEADER_EPOCH", false},
		{1, pathFetch, 3, http.StatusConflict, "UNKNOWN_LEADER_EPOCH", false},
		{1, pathEpochEnd, 1, http.StatusConflict, "FENCED_LEADER_EPOCH", false},
		{0, pathFetch, 2, http.StatusMisdirectedRequest, "NOT_LEADER", false},
		{1, pathFetch, 2, http.StatusOK, "", true},
		{1, pathEpochEnd, 2, http.StatusOK, "", true},
	} {
		status, body := internalCall(t, bs[tc.broker], tc.path, replicaRequest("orders", tc.epoch))
		if status != tc.status || body.Code != tc.code {
			t.Errorf("%s on broker %d with epoch %d: %d %q, want %d %q", tc.path, tc.broker, tc.epoch, status, body.Code, tc.status, tc.code)
		}
		if tc.code == "NOT_LEADER" && (body.Leader == nil || *body.Leader != 1) {
			t.Errorf("NOT_LEADER without the leader: %+v", body)
		}
	}
	for _, tc := range []struct {
		field  string
		value  any
		status int
		code   string
	}{
		{"fetch_offset", "x", http.StatusBadRequest, "INVALID_JSON"},
		{"fetch_offset", -1, http.StatusBadRequest, "INVALID_ARGUMENT"},
		{"replica_id", 7, http.StatusConflict, "NOT_REPLICA"},
	} {
		req := replicaRequest("orders", 2)
		req[tc.field] = tc.value
		if status, body := internalCall(t, bs[1], pathFetch, req); status != tc.status || body.Code != tc.code {
			t.Errorf("fetch with %s=%v: %d %q, want %d %s", tc.field, tc.value, status, body.Code, tc.status, tc.code)
		}
	}
}

func TestRestartReopensAndUnassignedPartitionsAreDeleted(t *testing.T) {
	c := newMemCluster()
	var mu sync.Mutex
	var events []string
	bs := startBrokers(t, c, 3, func(cfg *Config) {
		id := cfg.BrokerID
		cfg.OnLeadershipChange = func(topic string, partition int32, leader bool, epoch int32) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, fmt.Sprintf("%d:%s-%d:%v:%d", id, topic, partition, leader, epoch))
		}
	})
	threeReplicas(c, "orders", nil)
	c.set(PartitionState{Topic: "solo", Partition: 0, Replicas: []int32{0}, Leader: 0, LeaderEpoch: 1, ISR: []int32{0}, PartitionEpoch: 1})
	waitLeader(t, bs[0], "orders")
	waitLeader(t, bs[0], "solo")
	produce(t, bs[0], "orders", recordsOf("a", 7), AcksAll)
	produce(t, bs[0], "solo", recordsOf("s", 3), AcksAll)

	// A restart with the metadata not yet caught up serves nothing but
	// keeps everything.
	bs[0].stop(t)
	c.mu.Lock()
	c.caughtUp = false
	saved := c.parts
	c.parts = map[partitionKey]PartitionState{}
	c.mu.Unlock()
	bs[0].start(t)
	i := info(t, bs[0], "orders")
	if i.IsLeader || i.LogEndOffset != 7 || i.HighWatermark != 7 {
		t.Errorf("reopened replica before metadata: %+v (want log end and checkpointed HW 7)", i)
	}
	c.mu.Lock()
	c.caughtUp, c.parts = true, saved
	c.notifyLocked()
	c.mu.Unlock()
	waitLeader(t, bs[0], "orders")
	waitLeader(t, bs[0], "solo")
	res, err := bs[0].manager().Fetch(context.Background(), "solo", 0, 0, 1<<20, 0, 0)
	if err != nil || len(res.Records) != 3 {
		t.Fatalf("solo after restart: %d records, %v", len(res.Records), err)
	}

	// Moving orders off broker 2 and deleting solo removes their data.
	c.update("orders", 0, func(s *PartitionState) { s.Replicas = []int32{0, 1}; s.ISR = []int32{0, 1} })
	c.remove("solo", 0)
	gone := func(b *testBroker, topic string) bool {
		_, err := os.Stat(filepath.Join(b.dir, partitionDir(topic, 0)))
		return os.IsNotExist(err)
	}
	eventually(t, 5*time.Second, "unassigned partitions deleted", func() bool {
		return gone(bs[2], "orders") && gone(bs[0], "solo")
	})
	if gone(bs[1], "orders") || gone(bs[0], "orders") {
		t.Error("a still-assigned replica was deleted")
	}
	mu.Lock()
	defer mu.Unlock()
	// Broker 0 led both partitions twice (before and after its restart)
	// and gave up solo when it was deleted; followers report nothing.
	slices.Sort(events)
	want := []string{"0:orders-0:true:1", "0:orders-0:true:1", "0:solo-0:false:1", "0:solo-0:true:1", "0:solo-0:true:1"}
	if !slices.Equal(events, want) {
		t.Errorf("leadership events %v, want %v", events, want)
	}
}

// A follower that learns of a leadership before its new leader does is
// answered once the leader learns it, instead of being refused with
// UNKNOWN_LEADER_EPOCH or NOT_LEADER and sent into a backoff.
func TestLeaderAnswersAFollowerAheadOfItsMetadata(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	for i, step := range []struct {
		path      string
		newLeader int32
		asker     int
	}{{pathFetch, 1, 2}, {pathEpochEnd, 2, 1}} {
		epoch := c.state("orders", 0).LeaderEpoch + 1
		q := replicaRequest("orders", int(epoch))
		q["replica_id"] = step.asker
		type reply struct {
			status int
			code   string
		}
		got := make(chan reply, 1)
		go func() {
			status, body := internalCall(t, bs[step.newLeader], step.path, q)
			got <- reply{status, body.Code}
		}()
		time.Sleep(50 * time.Millisecond) // the request is waiting on the leader
		c.update("orders", 0, func(s *PartitionState) { s.Leader = step.newLeader })
		if r := <-got; r.status != http.StatusOK {
			t.Errorf("step %d: %s naming epoch %d, which broker %d learns next: %d %q, want 200",
				i, step.path, epoch, step.newLeader, r.status, r.code)
		}
	}
}
