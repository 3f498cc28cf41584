package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/buffers"
	"github.com/kairolog/kairolog/broker/peer"
)

// Forwarded produces, coalesced per leader. HTTP clients reach the
// brokers through one Service address, so the broker they reach passes
// two of every three produces on to another leader. Sent one peer request
// each, under many concurrent single-record produces those requests cost
// the forwarding broker and the leader as much again as the clients' own
// (docs/benchmarks.md). So at most forwardsInFlight requests to one
// leader are in flight; the produces that arrive meanwhile wait and go
// together as the next request (opProduceMany), as group commit does for
// appends: an idle broker sends each produce at once, a busy one sends
// fewer, larger requests. The leader runs each produce of the request on
// its own, as if it had come alone, and answers each with its positions or
// its error; produces for one partition meet again in its group commit.
//
// An idempotent produce goes alone (opProduceRecords): the leader would
// run the produces of one request concurrently, and a producer's next
// sequence must not overtake the one before it. A leader that predates
// opProduceMany answers NOT_FOUND, and each produce goes alone.
//
// A leader that stops answering (a stalled process, a partition of the
// network) holds its requests in flight until they time out, and the
// produces queued behind them would wait as long, then go to a broker that
// by then no longer leads. So when the metadata moves a partition's
// leadership on, the produces still waiting for it leave the queue unsent
// (leadersMoved) and their callers route them again.

// opProduceMany passes several produces on to one leader.
var opProduceMany = peer.NewOp[forwardedProduces, producedEach]("core/produce-many")

const (
	// forwardsInFlight bounds the requests in flight to one leader.
	forwardsInFlight = 2
	// maxCoalescedBytes and maxCoalescedProduces bound one request; a
	// larger single produce still goes, alone.
	maxCoalescedBytes    = 4 << 20
	maxCoalescedProduces = 256
	// forwardSlack is how long past its longest acks=all timeout a
	// request may take before the forwarding broker gives up on it.
	forwardSlack = 10 * time.Second
)

// errLeaderMoved ends the wait of a produce that was never sent: its
// partition's leadership moved on while it waited (leadersMoved).
var errLeaderMoved = errors.New("the partition's leadership moved while the produce waited to be sent")

// forwardedProduces is opProduceMany's request: the produces, each one
// partition's records, whose encoded records follow one another in the
// payload.
type forwardedProduces struct {
	Produces []forwardedPart `json:"produces"`
	records  []byte
}

func (f *forwardedProduces) PeerPayload() []byte     { return f.records }
func (f *forwardedProduces) SetPeerPayload(b []byte) { f.records = b }

// forwardedPart is one produce of opProduceMany: a forwardedProduce
// without a producer, with the leader epoch the forwarding broker saw
// and the length of its records in the payload.
type forwardedPart struct {
	Topic     string        `json:"topic"`
	Partition int32         `json:"partition"`
	Epoch     int32         `json:"epoch"`
	Acks      api.Acks      `json:"acks"`
	Timeout   time.Duration `json:"timeout"`
	Count     int           `json:"count"`
	Bytes     int           `json:"bytes"`
}

// producedEach is opProduceMany's answer, one per produce in order.
type producedEach struct {
	Produces []producedPart `json:"produces"`
}

// producedPart is one produce's answer: its positions as runs, or the
// error that failed it whole.
type producedPart struct {
	Runs   []positionRun  `json:"runs,omitempty"`
	Status int            `json:"status,omitempty"`
	Error  *api.ErrorBody `json:"error,omitempty"`
}

// forwardedSections are the buffers of records passed on to their leader
// as records sections: given back once the leader has answered the
// request that carried them (send).
var forwardedSections buffers.Pool

// produceForwarder sends the produces this broker passes on, coalesced
// per leader.
type produceForwarder struct {
	client *peer.Client
	ctx    context.Context // the broker's: requests end when it closes

	mu      sync.Mutex
	leaders map[string]*forwardQueue // by peer address
}

// forwardQueue is one leader's produces waiting to be sent, and how many
// requests to it are in flight.
type forwardQueue struct {
	inFlight int
	waiting  []*pendingProduce
}

// pendingProduce is one produce passed on, and once done its outcome.
type pendingProduce struct {
	ctx     context.Context
	req     api.ProduceRequest // for a leader without opProduceMany
	part    forwardedPart
	records []byte

	done      chan struct{}
	positions []api.RecordPosition
	err       error
}

func newProduceForwarder(ctx context.Context, c *peer.Client) *produceForwarder {
	return &produceForwarder{client: c, ctx: ctx, leaders: map[string]*forwardQueue{}}
}

// produce sends the records of req, all of partition p, to the leader
// whose peer listener is at addr, as forwarded at epoch, and returns each
// record's position.
func (f *produceForwarder) produce(ctx context.Context, addr string, epoch int32, req api.ProduceRequest, p int32) ([]api.RecordPosition, error) {
	if req.Producer != nil {
		return produceAt(ctx, f.client, addr, epoch, req, p)
	}
	records := encodeForwardedRecords(forwardedSections.Get(forwardedSize(req.Records)), req.Records)
	pp := &pendingProduce{ctx: ctx, req: req, records: records, done: make(chan struct{}),
		part: forwardedPart{Topic: req.Topic, Partition: p, Epoch: epoch, Acks: req.Acks, Timeout: req.Timeout,
			Count: len(req.Records), Bytes: len(records)}}
	f.mu.Lock()
	q := f.leaders[addr]
	if q == nil {
		q = &forwardQueue{}
		f.leaders[addr] = q
	}
	q.waiting = append(q.waiting, pp)
	if q.inFlight < forwardsInFlight {
		q.inFlight++
		go f.drain(addr, q)
	}
	f.mu.Unlock()
	select {
	case <-pp.done:
		return pp.positions, pp.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// drain sends addr's waiting produces, as many as fit in one request at a
// time, until none wait.
func (f *produceForwarder) drain(addr string, q *forwardQueue) {
	for {
		f.mu.Lock()
		batch := q.take()
		if len(batch) == 0 {
			q.inFlight--
			if q.inFlight == 0 {
				delete(f.leaders, addr)
			}
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		f.send(addr, batch)
	}
}

// take removes the produces of the next request from the queue. A produce
// whose caller has given up is dropped unsent.
func (q *forwardQueue) take() []*pendingProduce {
	var batch []*pendingProduce
	bytes, n := 0, 0
	for _, pp := range q.waiting {
		n++
		if pp.ctx.Err() != nil {
			continue
		}
		if len(batch) > 0 && (bytes+pp.part.Bytes > maxCoalescedBytes || len(batch) == maxCoalescedProduces) {
			n--
			break
		}
		batch = append(batch, pp)
		bytes += pp.part.Bytes
	}
	q.waiting = q.waiting[n:]
	return batch
}

// leadersMoved takes the waiting produces whose partition's leadership
// moved on since they were queued (moved reports it) out of their queue,
// unsent, and ends their wait with errLeaderMoved. Requests already in
// flight are left to their answer or their timeout: the old leader may be
// alive (a controlled shutdown, a preferred-leader election) and may have
// written their records, so answering them anything else, or sending them
// again, could make a retrying client write them twice.
func (f *produceForwarder) leadersMoved(moved func(part forwardedPart) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, q := range f.leaders {
		kept := q.waiting[:0]
		for _, pp := range q.waiting {
			if moved(pp.part) {
				pp.err = errLeaderMoved
				close(pp.done)
				continue
			}
			kept = append(kept, pp)
		}
		clear(q.waiting[len(kept):])
		q.waiting = kept
	}
}

// rerouteMovedForwards, after every change of the metadata, hands the
// forwarder the produces whose partition has a newer leader epoch than the
// one they were queued for, or no longer exists (leadersMoved).
func (b *Broker) rerouteMovedForwards(ctx context.Context) {
	images, stop := b.node.Subscribe()
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case img := <-images:
			b.forwards.leadersMoved(func(part forwardedPart) bool {
				t := img.Topic(part.Topic)
				return t == nil || int(part.Partition) >= len(t.Partitions) ||
					int32(t.Partitions[part.Partition].LeaderEpoch) > part.Epoch
			})
		}
	}
}

// send runs batch as one request and gives each produce its outcome.
func (f *produceForwarder) send(addr string, batch []*pendingProduce) {
	req := forwardedProduces{Produces: make([]forwardedPart, len(batch)), records: joinRecords(batch)}
	if len(batch) > 1 {
		for _, pp := range batch {
			forwardedSections.Put(pp.records) // copied into the request's
			pp.records = nil
		}
	}
	var longest time.Duration
	for i, pp := range batch {
		req.Produces[i] = pp.part
		longest = max(longest, pp.part.Timeout)
	}
	ctx, cancel := context.WithTimeout(f.ctx, longest+forwardSlack)
	defer cancel()
	resp, err := peer.Call(ctx, f.client, addr, opProduceMany, req, peer.Forwarded())
	if err == nil {
		// The leader answered, so it read the whole request: the records
		// were sent and are no longer read. Anything else may leave them
		// still on their way out.
		forwardedSections.Put(req.records)
	}
	if api.IsCode(err, api.CodeNotFound) {
		// A leader of an earlier version (a rolling upgrade).
		var wg sync.WaitGroup
		for _, pp := range batch {
			wg.Go(func() {
				pp.positions, pp.err = produceAt(pp.ctx, f.client, addr, pp.part.Epoch, pp.req, pp.part.Partition)
				close(pp.done)
			})
		}
		wg.Wait()
		return
	}
	if err == nil && len(resp.Produces) != len(batch) {
		err = api.Errorf(api.CodeInternal, "leader answered %d produces of %d", len(resp.Produces), len(batch))
	}
	for i, pp := range batch {
		if err != nil {
			pp.err = err
		} else {
			pp.positions, pp.err = resp.Produces[i].outcome(pp.part.Count)
		}
		close(pp.done)
	}
}

// joinRecords is the records of every produce of batch, one after
// another: one produce's as they are, several joined with one allocation.
func joinRecords(batch []*pendingProduce) []byte {
	if len(batch) == 1 {
		return batch[0].records
	}
	size := 0
	for _, pp := range batch {
		size += len(pp.records)
	}
	records := forwardedSections.Get(size)
	for _, pp := range batch {
		records = append(records, pp.records...)
	}
	return records
}

// outcome is the positions of a produce of count records, or its error.
func (a producedPart) outcome(count int) ([]api.RecordPosition, error) {
	if a.Error != nil {
		return nil, api.FromBody(a.Status, *a.Error)
	}
	return producedRuns{Runs: a.Runs}.positions(count)
}

// serveProduceMany is opProduceMany's handler: each produce runs on its
// own, at the epoch its forwarder saw, and is answered on its own.
func (b *Broker) serveProduceMany(ctx context.Context, req forwardedProduces) (producedEach, error) {
	records, err := splitProduces(req)
	if err != nil {
		return producedEach{}, api.Errorf(api.CodeInvalidArgument, "forwarded produces: %v", err)
	}
	out := producedEach{Produces: make([]producedPart, len(req.Produces))}
	var wg sync.WaitGroup
	for i, part := range req.Produces {
		serve := func() {
			runs, err := b.serveProduceRecords(peer.WithLeaderEpoch(ctx, part.Epoch), forwardedProduce{
				Topic: part.Topic, Partition: part.Partition, Acks: part.Acks, Timeout: part.Timeout,
				Count: part.Count, records: records[i]})
			out.Produces[i] = answerPart(runs, err)
		}
		if i == len(req.Produces)-1 {
			// The last one on this goroutine, whose stack has grown to
			// what a produce needs: with one produce, no goroutine starts.
			serve()
			continue
		}
		wg.Go(serve)
	}
	wg.Wait()
	return out, nil
}

// answerPart is the answer of one produce of opProduceMany.
func answerPart(runs producedRuns, err error) producedPart {
	if err == nil {
		return producedPart{Runs: runs.Runs}
	}
	e, ok := AsAPIError(peerAnswer(err))
	if !ok {
		e = api.Errorf(api.CodeInternal, "%v", err) // a bug
	}
	body := e.Body()
	return producedPart{Status: e.Status, Error: &body}
}

// splitProduces cuts the payload of req into each produce's records,
// refusing lengths that do not add up to it.
func splitProduces(req forwardedProduces) ([][]byte, error) {
	if len(req.Produces) > maxCoalescedProduces {
		return nil, fmt.Errorf("%d produces in one request, at most %d", len(req.Produces), maxCoalescedProduces)
	}
	out := make([][]byte, len(req.Produces))
	rest := req.records
	for i, part := range req.Produces {
		if part.Bytes < 0 || part.Bytes > len(rest) {
			return nil, fmt.Errorf("produce %d: %d bytes of records, %d left in the payload", i, part.Bytes, len(rest))
		}
		out[i], rest = rest[:part.Bytes:part.Bytes], rest[part.Bytes:]
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("%d bytes after the last produce's records", len(rest))
	}
	return out, nil
}
