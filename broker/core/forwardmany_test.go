package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/peer"
)

// standInLeader serves opProduceMany as a leader that stores every
// produce's records from offset 100 of its partition, except partition
// 9's, which it refuses NOT_ENOUGH_REPLICAS. Each request waits for a
// value on release first. It also serves opProduceRecords, for
// idempotent produces.
type standInLeader struct {
	mux     *peer.Mux
	release chan struct{}

	mu       sync.Mutex
	requests [][]forwardedPart // the produces of each opProduceMany request, in arrival order
}

func newStandInLeader(t *testing.T, secret peer.Secret, many bool) (*standInLeader, string) {
	l := &standInLeader{mux: peer.NewMux(secret, slog.New(slog.NewTextHandler(io.Discard, nil))), release: make(chan struct{}, 100)}
	store := func(f forwardedProduce) (producedRuns, error) {
		records, err := decodeForwardedRecords(f.records, f.Count, f.Partition)
		if err != nil {
			return producedRuns{}, api.Errorf(api.CodeInvalidArgument, "%v", err)
		}
		if f.Partition == 9 {
			return producedRuns{}, api.Errorf(api.CodeNotEnoughReplicas, "the ISR of %s-9 is 1", f.Topic)
		}
		var positions []api.RecordPosition
		for i, r := range records {
			if want := fmt.Sprintf("%s-%d", f.Topic, f.Partition); string(r.Value) != want {
				return producedRuns{}, api.Errorf(api.CodeInvalidArgument, "record %d is %q, want %q", i, r.Value, want)
			}
			positions = append(positions, api.RecordPosition{Partition: f.Partition, Offset: 100 + int64(i)})
		}
		return producedRuns{Runs: runsOf(positions)}, nil
	}
	peer.Handle(l.mux, opProduceRecords, func(_ context.Context, f forwardedProduce) (producedRuns, error) { return store(f) })
	peer.Handle(l.mux, opProduce, func(_ context.Context, req api.ProduceRequest) (producedPositions, error) {
		runs, err := store(forwardedProduce{Topic: req.Topic, Partition: req.Records[0].Partition, Count: len(req.Records),
			records: encodeForwardedRecords(nil, req.Records)})
		if err != nil {
			return producedPositions{}, err
		}
		positions, err := runs.positions(len(req.Records))
		return producedPositions{Records: positions}, err
	})
	if many {
		peer.Handle(l.mux, opProduceMany, func(_ context.Context, req forwardedProduces) (producedEach, error) {
			l.mu.Lock()
			l.requests = append(l.requests, req.Produces)
			l.mu.Unlock()
			<-l.release
			records, err := splitProduces(req)
			if err != nil {
				return producedEach{}, api.Errorf(api.CodeInvalidArgument, "%v", err)
			}
			out := producedEach{}
			for i, part := range req.Produces {
				runs, err := store(forwardedProduce{Topic: part.Topic, Partition: part.Partition, Count: part.Count, records: records[i]})
				out.Produces = append(out.Produces, answerPart(runs, err))
			}
			return out, nil
		})
	}
	srv := httptest.NewServer(l.mux)
	t.Cleanup(srv.Close)
	// Runs first: a failed test leaves no request held.
	t.Cleanup(func() { close(l.release) })
	return l, srv.URL
}

func (l *standInLeader) waitRequests(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		got := len(l.requests)
		l.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leader got %d requests, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// forwarderTo starts a stand-in leader (with opProduceMany if many) and
// a forwarder that passes produces on to it.
func forwarderTo(t *testing.T, many bool) (*standInLeader, string, *produceForwarder) {
	secret, err := peer.NewSecret("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	leader, addr := newStandInLeader(t, secret, many)
	c := peer.NewClient(secret)
	t.Cleanup(c.Close)
	return leader, addr, newProduceForwarder(context.Background(), c)
}

// forwardOutcome is what one forwarded produce came back with.
type forwardOutcome struct {
	positions []api.RecordPosition
	err       error
}

// forwardInBackground passes n records of partition p of topic t on
// through f to the leader at addr, as seen at leader epoch 3, and
// delivers the outcome.
func forwardInBackground(f *produceForwarder, addr string, p int32, n int) <-chan forwardOutcome {
	out := make(chan forwardOutcome, 1)
	req := api.ProduceRequest{Topic: "t", Acks: api.AcksAll, Timeout: 5 * time.Second}
	for range n {
		req.Records = append(req.Records, api.ProduceRecord{Partition: p, Value: []byte(fmt.Sprintf("t-%d", p))})
	}
	go func() {
		positions, err := f.produce(context.Background(), addr, 3, req, p)
		out <- forwardOutcome{positions, err}
	}()
	return out
}

// TestForwardedProducesShareARequest: while two requests to a leader are
// in flight, the produces passed on to it wait and then go together as
// one request, and each gets its own answer: its records' offsets, or its
// partition's error.
func TestForwardedProducesShareARequest(t *testing.T) {
	leader, addr, f := forwarderTo(t, true)
	produce := func(p int32, n int) <-chan forwardOutcome { return forwardInBackground(f, addr, p, n) }
	first := produce(0, 1)
	leader.waitRequests(t, 1)
	second := produce(1, 2)
	leader.waitRequests(t, 2)
	// Both requests are held: these wait, then go as one.
	later := []<-chan forwardOutcome{produce(2, 3), produce(9, 1), produce(2, 1), produce(4, 5)}
	waitQueued(t, f, addr, len(later))
	leader.release <- struct{}{}
	leader.release <- struct{}{}
	leader.waitRequests(t, 3)
	leader.release <- struct{}{}

	check := func(name string, o forwardOutcome, p int32, n int) {
		t.Helper()
		if o.err != nil || len(o.positions) != n {
			t.Fatalf("%s: %d positions, %v; want %d", name, len(o.positions), o.err, n)
		}
		for i, pos := range o.positions {
			if pos.Partition != p || pos.Offset != 100+int64(i) || pos.Code != "" {
				t.Fatalf("%s: position %d is %+v", name, i, pos)
			}
		}
	}
	check("first", <-first, 0, 1)
	check("second", <-second, 1, 2)
	check("later p2", <-later[0], 2, 3)
	if o := <-later[1]; !api.IsCode(o.err, api.CodeNotEnoughReplicas) || o.positions != nil {
		t.Fatalf("partition 9: %+v, want NOT_ENOUGH_REPLICAS alone", o)
	}
	check("later p2 again", <-later[2], 2, 1)
	check("later p4", <-later[3], 4, 5)

	leader.mu.Lock()
	defer leader.mu.Unlock()
	if len(leader.requests) != 3 || len(leader.requests[2]) != 4 {
		t.Fatalf("the leader got requests of %v produces, want 1, 1 and 4", lengths(leader.requests))
	}
	for i, part := range leader.requests[2] {
		if part.Epoch != 3 || part.Acks != api.AcksAll || part.Timeout != 5*time.Second {
			t.Fatalf("produce %d went as %+v", i, part)
		}
	}
}

// TestQueuedProducesLeaveALeaderThatMoved: produces waiting behind the two
// requests a leader holds leave the queue unsent, with errLeaderMoved,
// once the metadata gives their partition a newer leader epoch; the
// others wait on and go as before. Without it they would wait for the held
// requests' answer or timeout, and then go to a broker that no longer
// leads.
func TestQueuedProducesLeaveALeaderThatMoved(t *testing.T) {
	leader, addr, f := forwarderTo(t, true)
	first := forwardInBackground(f, addr, 0, 1)
	leader.waitRequests(t, 1)
	second := forwardInBackground(f, addr, 1, 1)
	leader.waitRequests(t, 2)
	moved, stays := forwardInBackground(f, addr, 2, 3), forwardInBackground(f, addr, 4, 1)
	waitQueued(t, f, addr, 2)

	f.leadersMoved(func(part forwardedPart) bool { return part.Partition == 2 && part.Epoch == 3 })
	select {
	case o := <-moved:
		if !errors.Is(o.err, errLeaderMoved) || o.positions != nil {
			t.Fatalf("the produce whose leader moved came back with %+v, want errLeaderMoved", o)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the produce whose leader moved still waits behind the held requests")
	}
	waitQueued(t, f, addr, 1)

	for range 3 {
		leader.release <- struct{}{}
	}
	for name, o := range map[string]forwardOutcome{"first": <-first, "second": <-second, "stays": <-stays} {
		if o.err != nil || len(o.positions) != 1 {
			t.Fatalf("%s: %+v", name, o)
		}
	}
	leader.mu.Lock()
	defer leader.mu.Unlock()
	if len(leader.requests) != 3 || len(leader.requests[2]) != 1 || leader.requests[2][0].Partition != 4 {
		t.Fatalf("the leader got %v, want the third request to carry partition 4 alone", leader.requests)
	}
}

// waitQueued waits until n produces wait for addr.
func waitQueued(t *testing.T, f *produceForwarder, addr string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		got := len(f.leaders[addr].waiting)
		f.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d produces wait, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func lengths(requests [][]forwardedPart) []int {
	var out []int
	for _, r := range requests {
		out = append(out, len(r))
	}
	return out
}

// TestForwardedProducesToAnEarlierLeader: a leader without opProduceMany
// (a rolling upgrade) gets each produce on its own, with the same
// answers; an idempotent produce always goes on its own.
func TestForwardedProducesToAnEarlierLeader(t *testing.T) {
	leader, addr, f := forwarderTo(t, false)
	var wg sync.WaitGroup
	for p := range int32(6) {
		wg.Go(func() {
			req := api.ProduceRequest{Topic: "t", Acks: api.AcksAll, Timeout: 5 * time.Second}
			if p == 5 {
				req.Producer = &api.ProducerSequence{ID: 7, Epoch: 0, Sequence: 0}
			}
			for range 2 {
				req.Records = append(req.Records, api.ProduceRecord{Partition: p, Value: []byte(fmt.Sprintf("t-%d", p))})
			}
			positions, err := f.produce(context.Background(), addr, 1, req, p)
			if err != nil || len(positions) != 2 || positions[1].Offset != 101 || positions[1].Partition != p {
				t.Errorf("partition %d: %+v, %v", p, positions, err)
			}
		})
	}
	wg.Wait()
	served := leader.mux.Served()
	if served[opProduceRecords.Name()] != 6 {
		t.Fatalf("the earlier leader served %v, want 6 produce-records", served)
	}
}

// TestForwardedProducerGivesUpWhileWaiting: a produce whose caller gives up
// before its turn is answered with the caller's error and never sent.
func TestForwardedProducerGivesUpWhileWaiting(t *testing.T) {
	leader, addr, f := forwarderTo(t, true)
	one := func(ctx context.Context, p int32) error {
		req := api.ProduceRequest{Topic: "t", Timeout: time.Second,
			Records: []api.ProduceRecord{{Partition: p, Value: []byte(fmt.Sprintf("t-%d", p))}}}
		_, err := f.produce(ctx, addr, 0, req, p)
		return err
	}
	done := make(chan error, 2)
	go func() { done <- one(context.Background(), 0) }()
	leader.waitRequests(t, 1)
	go func() { done <- one(context.Background(), 1) }()
	leader.waitRequests(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := one(ctx, 2); err != context.DeadlineExceeded {
		t.Fatalf("a produce given up while waiting: %v", err)
	}
	leader.release <- struct{}{}
	leader.release <- struct{}{}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	leader.mu.Lock()
	defer leader.mu.Unlock()
	if len(leader.requests) != 2 {
		t.Fatalf("the leader got %v, want only the two requests in flight", leader.requests)
	}
}

// TestSplitProducesRefusesBadLengths: the produces' lengths must add up
// to the payload exactly.
func TestSplitProducesRefusesBadLengths(t *testing.T) {
	payload := []byte(strings.Repeat("x", 10))
	tests := []struct {
		name  string
		bytes []int
		ok    bool
	}{
		{"exact", []int{4, 6}, true},
		{"empty produce", []int{0, 10}, true},
		{"short", []int{4, 5}, false},
		{"long", []int{4, 7}, false},
		{"negative", []int{-1, 11}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := forwardedProduces{records: payload}
			for _, n := range tt.bytes {
				req.Produces = append(req.Produces, forwardedPart{Bytes: n})
			}
			parts, err := splitProduces(req)
			if (err == nil) != tt.ok {
				t.Fatalf("split %v: %v", tt.bytes, err)
			}
			if tt.ok && len(parts[1]) != tt.bytes[1] {
				t.Fatalf("second produce has %d bytes", len(parts[1]))
			}
		})
	}
	if _, err := splitProduces(forwardedProduces{Produces: make([]forwardedPart, maxCoalescedProduces+1)}); err == nil {
		t.Fatal("more produces than one request may carry were accepted")
	}
}
