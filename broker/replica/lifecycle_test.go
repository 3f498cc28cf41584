package replica

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
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

// internalCall posts a request of the fetch session operation to b
// directly, as a follower would, and returns the status, the error body of
// a refused request and, for an answered one, the reply.
func internalCall(t *testing.T, b *testBroker, req map[string]any) (int, api.ErrorBody, sessionReply) {
	t.Helper()
	body, _ := json.Marshal(req)
	resp, err := testPeer.HTTPClient().Post(b.srv.URL+peer.PathPrefix+opFetchSession.Name(), "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var eb api.ErrorBody
	var reply sessionReply
	if resp.StatusCode != http.StatusOK {
		json.NewDecoder(resp.Body).Decode(&eb)
		return resp.StatusCode, eb, reply
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil || len(raw) < 4 {
		t.Fatalf("reply: %d bytes, %v", len(raw), err)
	}
	n := binary.BigEndian.Uint32(raw)
	if err := json.Unmarshal(raw[4:4+n], &reply); err != nil {
		t.Fatalf("reply: %v", err)
	}
	reply.Batches = raw[4+n:]
	return resp.StatusCode, eb, reply
}

// replicaRequest is a new session's request by follower 2 for partition 0
// of topic in epoch, fetching from offset 0, waiting wait_ms (0).
func replicaRequest(topic string, epoch int) map[string]any {
	return map[string]any{"replica_id": 2, "session_id": 0, "session_epoch": 0, "wait_ms": 0, "max_bytes": 1 << 20,
		"partitions": []map[string]any{{"topic": topic, "partition": 0, "leader_epoch": epoch,
			"fetch_offset": 0, "last_fetched_epoch": -1, "max_bytes": 1024}}}
}

// partitionOf is the request's only partition, to change a field of.
func partitionOf(req map[string]any) map[string]any {
	return req["partitions"].([]map[string]any)[0]
}

// answerCode is the code of the partition's answer in reply, "" for an
// answer without error; ok is false when the reply does not name it.
func answerCode(reply sessionReply, topic string) (code string, e sessionPartitionReply, ok bool) {
	for _, e := range reply.Partitions {
		if e.Topic == topic && e.Partition == 0 {
			if e.Error != nil {
				return e.Error.Code, e, true
			}
			return "", e, true
		}
	}
	return "", sessionPartitionReply{}, false
}

func TestInternalAPIRejectsStaleAndFutureEpochs(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	c.update("orders", 0, func(s *PartitionState) { s.Leader = 1 }) // epoch 2
	waitLeader(t, bs[1], "orders")

	// Each partition of a session is answered on its own: the request
	// succeeds and the partition's entry carries the refusal.
	for _, tc := range []struct {
		broker      int
		epoch       int
		lastFetched int // the follower's latest epoch: the leader checks it against its log
		code        string
	}{
		{1, 1, -1, "FENCED_LEADER_EPOCH"},
		{1, 3, -1, "UNKNOWN_LEADER_EPOCH"},
		{1, 1, 1, "FENCED_LEADER_EPOCH"},
		{0, 2, -1, "NOT_LEADER"},
		{1, 2, -1, ""},
		{1, 2, 1, ""},
	} {
		req := replicaRequest("orders", tc.epoch)
		partitionOf(req)["last_fetched_epoch"] = tc.lastFetched
		status, body, reply := internalCall(t, bs[tc.broker], req)
		if status != http.StatusOK {
			t.Errorf("broker %d, epoch %d: %d %+v, want 200", tc.broker, tc.epoch, status, body)
			continue
		}
		code, e, ok := answerCode(reply, "orders")
		if !ok || code != tc.code {
			t.Errorf("broker %d, epoch %d, last fetched %d: answer %q (named %v), want %q",
				tc.broker, tc.epoch, tc.lastFetched, code, ok, tc.code)
		}
		if tc.code == "NOT_LEADER" && (e.Error == nil || e.Error.Leader == nil || *e.Error.Leader != 1) {
			t.Errorf("NOT_LEADER without the leader: %+v", e.Error)
		}
	}
	for _, tc := range []struct {
		what      string
		change    func(req, partition map[string]any)
		status    int
		code      string
		partition bool // the partition's answer, not the request's
	}{
		{"fetch_offset x", func(_, q map[string]any) { q["fetch_offset"] = "x" }, http.StatusBadRequest, "INVALID_JSON", false},
		{"fetch_offset -1", func(_, q map[string]any) { q["fetch_offset"] = -1 }, http.StatusBadRequest, "INVALID_ARGUMENT", false},
		{"replica_id 7", func(r, _ map[string]any) { r["replica_id"] = 7 }, http.StatusOK, "NOT_REPLICA", true},
		{"session_id 12345", func(r, _ map[string]any) { r["session_id"], r["session_epoch"] = 12345, 1 },
			http.StatusConflict, "FETCH_SESSION_ID_NOT_FOUND", false},
		{"session_id without epoch", func(r, _ map[string]any) { r["session_id"] = 12345 }, http.StatusBadRequest, "INVALID_ARGUMENT", false},
	} {
		req := replicaRequest("orders", 2)
		tc.change(req, partitionOf(req))
		status, body, reply := internalCall(t, bs[1], req)
		code := body.Code
		if tc.partition {
			code, _, _ = answerCode(reply, "orders")
		}
		if status != tc.status || code != tc.code {
			t.Errorf("fetch with %s: %d %q, want %d %s", tc.what, status, code, tc.status, tc.code)
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
// UNKNOWN_LEADER_EPOCH or NOT_LEADER and sent into a backoff: the
// partition waits in the session, and the leader's metadata change ends
// the wait.
func TestLeaderAnswersAFollowerAheadOfItsMetadata(t *testing.T) {
	c := newMemCluster()
	bs := startBrokers(t, c, 3, nil)
	threeReplicas(c, "orders", nil)
	waitLeader(t, bs[0], "orders")
	produce(t, bs[0], "orders", recordsOf("a", 3), AcksAll)
	for i, step := range []struct {
		newLeader   int32
		asker       int
		lastFetched int
	}{{1, 2, -1}, {2, 1, 1}} {
		// The asker stands in for broker asker, which must not replace
		// the session with its own meanwhile.
		bs[step.asker].stop(t)
		epoch := c.state("orders", 0).LeaderEpoch + 1
		q := replicaRequest("orders", int(epoch))
		q["replica_id"] = step.asker
		q["wait_ms"] = 10_000
		partitionOf(q)["last_fetched_epoch"] = step.lastFetched
		type reply struct {
			status int
			code   string
			named  bool
			took   time.Duration
		}
		got := make(chan reply, 1)
		go func() {
			start := time.Now()
			status, _, r := internalCall(t, bs[step.newLeader], q)
			code, _, named := answerCode(r, "orders")
			got <- reply{status, code, named, time.Since(start)}
		}()
		time.Sleep(50 * time.Millisecond) // the request is waiting on the leader
		c.update("orders", 0, func(s *PartitionState) { s.Leader = step.newLeader })
		r := <-got
		if r.status != http.StatusOK || !r.named || r.code != "" {
			t.Errorf("step %d: fetch naming epoch %d, which broker %d learns next: %d, answer %q (named %v), want one without error",
				i, epoch, step.newLeader, r.status, r.code, r.named)
		}
		if r.took >= 10*time.Second {
			t.Errorf("step %d: answered after the whole wait (%v), not when the leader learnt its epoch", i, r.took)
		}
		bs[step.asker].start(t)
	}
}
