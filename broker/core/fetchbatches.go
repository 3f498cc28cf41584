package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/memory"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/replica"
)

// FetchBatches reads stored batches from several partitions for a consumer
// that decodes them itself (Kafka's Fetch), each from its leader: this
// broker's own replicas, the others' passed on over the peer transport in
// one call per leader (or refused with NOT_LEADER when ctx is Local).
//
// It first reads every partition at once. It answers then when the batches
// reach MinBytes, when MaxWait is zero or when a partition failed, as
// Kafka does; otherwise it waits for the first new data on any partition
// that had none, up to MaxWait, and answers then (again, while the batches
// stay below MinBytes and time is left). Partitions are filled in request
// order within MaxBytes and each within its own MaxBytes, except that the
// first batch found is always whole, however large, so that a consumer
// never stalls on a large batch. Every batch read is charged to the
// request's memory account (twice: the front door copies it into its
// reply); a partition whose read does not fit is left empty for the next
// fetch, or BROKER_BUSY when nothing was read at all.
func (b *Broker) FetchBatches(ctx context.Context, req api.FetchBatchesRequest) (api.FetchBatchesResult, error) {
	f := &fetchRound{b: b, req: req, out: make([]api.FetchedPartition, len(req.Partitions)),
		remote: map[int32][]int{}, left: req.MaxBytes}
	f.route(ctx)
	f.readAll(ctx)
	deadline := time.Now().Add(req.MaxWait)
	for f.bytes < max(req.MinBytes, 1) && !f.failed && time.Until(deadline) > 0 {
		if !f.waitForData(ctx, time.Until(deadline)) {
			break
		}
	}
	return api.FetchBatchesResult{Partitions: f.out}, nil
}

// fetchRound is one FetchBatches in progress.
type fetchRound struct {
	b   *Broker
	req api.FetchBatchesRequest
	out []api.FetchedPartition
	// local are the indexes of the partitions this broker leads; remote
	// those of every other leader.
	local  []int
	remote map[int32][]int
	// bytes is what the answer holds, left what it may still take.
	bytes, left int
	failed      bool
}

// route sorts the partitions by leader and answers the ones it cannot
// route.
func (f *fetchRound) route(ctx context.Context) {
	for i, fp := range f.req.Partitions {
		f.out[i] = api.FetchedPartition{Topic: fp.Topic, Partition: fp.Partition, HighWatermark: -1, LogStartOffset: -1}
		t, part, err := f.b.batchPartition(ctx, fp.Topic, fp.TopicID, fp.Partition)
		if err != nil {
			f.fail(i, err)
			continue
		}
		f.out[i].Topic = t.Name
		f.req.Partitions[i].Topic = t.Name
		leader := int32(part.Leader)
		if leader == f.b.id || leader < 0 {
			f.local = append(f.local, i)
			continue
		}
		if err := f.b.elsewhere(ctx, t.Name, fp.Partition, leader, int32(part.LeaderEpoch)); err != nil {
			f.fail(i, err)
			continue
		}
		f.remote[leader] = append(f.remote[leader], i)
	}
}

func (f *fetchRound) fail(i int, err error) {
	f.out[i].Err, _ = AsAPIError(batchError(err))
	if f.out[i].Err == nil {
		f.out[i].Err = api.Errorf(api.CodeInternal, "%v", err)
	}
	f.failed = true
}

// readAll reads every partition without waiting: the local ones in
// request order, each remote leader's in one call.
func (f *fetchRound) readAll(ctx context.Context) {
	for _, i := range f.local {
		res, err := f.readLocal(ctx, i, 0)
		f.take(i, res, err)
	}
	for leader, idx := range f.remote {
		res, err := f.readRemote(ctx, leader, idx, 0, 0)
		f.takeRemote(idx, res, err)
	}
}

// readLocal reads partition i of this broker, waiting up to wait for data.
// What it reads is charged before it is kept.
func (f *fetchRound) readLocal(ctx context.Context, i int, wait time.Duration) (api.FetchedPartition, error) {
	fp := f.req.Partitions[i]
	limit := fp.MaxBytes
	if f.left > 0 && (limit <= 0 || limit > f.left) {
		limit = f.left
	}
	if f.bytes > 0 && f.left <= 0 {
		return api.FetchedPartition{}, errFetchFull
	}
	if f.bytes > 0 {
		// Only the answer's first batch may exceed the limits.
		limit = max(limit, 1)
	}
	res, err := f.b.replicas.FetchBatches(ctx, fp.Topic, fp.Partition, fp.Offset, limit, wait, fp.CurrentLeaderEpoch)
	var nl *replica.NotLeaderError
	if err != nil && f.b.lagging(err, fp.Topic, fp.Partition) && f.b.awaitLeader(ctx, fp.Topic, fp.Partition) {
		res, err = f.b.replicas.FetchBatches(ctx, fp.Topic, fp.Partition, fp.Offset, limit, wait, fp.CurrentLeaderEpoch)
	}
	if errors.As(err, &nl) && nl.Leader >= 0 && nl.Leader != f.b.id {
		if e := f.b.elsewhere(ctx, fp.Topic, fp.Partition, nl.Leader, nl.Epoch); e != nil {
			return api.FetchedPartition{}, e
		}
		resp, ferr := f.readRemote(ctx, nl.Leader, []int{i}, wait, 1)
		if ferr != nil {
			return api.FetchedPartition{}, ferr
		}
		return resp.Partitions[0], nil
	}
	if err != nil {
		return api.FetchedPartition{}, err
	}
	if f.bytes > 0 && f.left > 0 && len(res.Batches) > f.left {
		// A first batch larger than what is left: it waits for the next
		// fetch, where it comes first.
		res.Batches = nil
	}
	if err := f.charge(ctx, len(res.Batches)); err != nil {
		if f.bytes > 0 {
			res.Batches = nil
		} else {
			return api.FetchedPartition{}, err
		}
	}
	return api.FetchedPartition{Topic: fp.Topic, Partition: fp.Partition, Batches: res.Batches,
		HighWatermark: res.HighWatermark, LogStartOffset: res.LogStartOffset}, nil
}

// errFetchFull is a partition the answer has no room left for.
var errFetchFull = errors.New("fetch answer full")

// charge charges n bytes of batches (and the front door's copy of them).
func (f *fetchRound) charge(ctx context.Context, n int) error {
	return memory.AccountFrom(ctx).Charge(f.b.memory.Responses, 2*int64(n))
}

// readRemote fetches partitions idx from leader, waiting up to wait for
// minBytes.
func (f *fetchRound) readRemote(ctx context.Context, leader int32, idx []int, wait time.Duration, minBytes int) (api.FetchBatchesResult, error) {
	sub := api.FetchBatchesRequest{MaxBytes: max(f.left, 1), MinBytes: minBytes, MaxWait: wait}
	for _, i := range idx {
		sub.Partitions = append(sub.Partitions, f.req.Partitions[i])
	}
	resp, err := forward(ctx, f.b, leader, -1, opFetchBatches, sub, api.CodeLeaderNotAvailable)
	if err != nil {
		return api.FetchBatchesResult{}, err
	}
	out, err := resp.result()
	if err != nil {
		return api.FetchBatchesResult{}, api.Errorf(api.CodeInternal, "broker %d: %v", leader, err)
	}
	if len(out.Partitions) != len(idx) {
		return api.FetchBatchesResult{}, api.Errorf(api.CodeInternal, "broker %d answered %d partitions for %d", leader, len(out.Partitions), len(idx))
	}
	n := 0
	for _, p := range out.Partitions {
		n += len(p.Batches)
	}
	if err := f.charge(ctx, n); err != nil {
		return api.FetchBatchesResult{}, err
	}
	return out, nil
}

// take records partition i's read.
func (f *fetchRound) take(i int, res api.FetchedPartition, err error) {
	if errors.Is(err, errFetchFull) {
		return
	}
	if err != nil {
		f.fail(i, err)
		return
	}
	res.Topic = f.out[i].Topic
	f.out[i] = res
	f.bytes += len(res.Batches)
	f.left -= len(res.Batches)
}

func (f *fetchRound) takeRemote(idx []int, res api.FetchBatchesResult, err error) {
	for k, i := range idx {
		if err != nil {
			f.fail(i, err)
			continue
		}
		p := res.Partitions[k]
		if p.Err != nil {
			f.out[i].Err, f.failed = p.Err, true
			continue
		}
		f.take(i, p, nil)
	}
}

// waitForData waits up to wait for new data on the partitions that had
// none: one long poll per local partition and per remote leader, the
// first to bring data ending the others. It reports whether any did.
func (f *fetchRound) waitForData(ctx context.Context, wait time.Duration) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		idx []int
		res api.FetchBatchesResult
		err error
	}
	results := make(chan result)
	waiting := 0
	for _, i := range f.local {
		if len(f.out[i].Batches) > 0 || f.out[i].Err != nil {
			continue
		}
		waiting++
		go func() {
			r, err := f.waitLocal(ctx, i, wait)
			results <- result{idx: []int{i}, res: api.FetchBatchesResult{Partitions: []api.FetchedPartition{r}}, err: err}
		}()
	}
	for leader, idx := range f.remote {
		var empty []int
		for _, i := range idx {
			if len(f.out[i].Batches) == 0 && f.out[i].Err == nil {
				empty = append(empty, i)
			}
		}
		if len(empty) == 0 {
			continue
		}
		waiting++
		go func() {
			r, err := f.readRemote(ctx, leader, empty, wait, 1)
			results <- result{idx: empty, res: r, err: err}
		}()
	}
	got := false
	for ; waiting > 0; waiting-- {
		r := <-results
		if r.err != nil {
			// The others' data, or the end of the wait, cancelled it; or
			// the partition failed, which the client must hear.
			if ctx.Err() == nil && !errors.Is(r.err, context.Canceled) && !errors.Is(r.err, context.DeadlineExceeded) {
				for _, i := range r.idx {
					f.fail(i, r.err)
				}
				cancel()
			}
			continue
		}
		before := f.bytes
		f.takeRemote(r.idx, r.res, nil)
		if f.bytes > before || f.failed {
			got = true
			cancel()
		}
	}
	return got
}

// waitLocal long-polls local partition i: it waits for the high watermark
// to pass the offset without holding any reply memory, then reads.
func (f *fetchRound) waitLocal(ctx context.Context, i int, wait time.Duration) (api.FetchedPartition, error) {
	fp := f.req.Partitions[i]
	o, err := f.b.replicas.AwaitData(ctx, fp.Topic, fp.Partition, fp.Offset, wait, fp.CurrentLeaderEpoch)
	if err != nil {
		// A leadership that moved is the read's to handle (it passes the
		// fetch on, or says NOT_LEADER).
		return f.readLocal(ctx, i, 0)
	}
	if o.HighWatermark <= fp.Offset {
		return api.FetchedPartition{Topic: fp.Topic, Partition: fp.Partition,
			HighWatermark: o.HighWatermark, LogStartOffset: o.LogStartOffset}, nil
	}
	return f.readLocal(ctx, i, 0)
}

// opFetchBatches passes a fetch of some partitions on to their leader.
var opFetchBatches = peer.NewOp[api.FetchBatchesRequest, fetchedBatches]("core/fetch-batches")

// fetchedBatches is a FetchBatchesResult between brokers: the batches
// travel after the JSON, as they are, and Sizes says whose they are.
type fetchedBatches struct {
	Partitions []api.FetchedPartition `json:"partitions"`
	Sizes      []int                  `json:"sizes"`
	payload    []byte
}

func (r *fetchedBatches) PeerPayload() []byte     { return r.payload }
func (r *fetchedBatches) SetPeerPayload(b []byte) { r.payload = b }

func newFetchedBatches(res api.FetchBatchesResult) fetchedBatches {
	out := fetchedBatches{Partitions: res.Partitions, Sizes: make([]int, len(res.Partitions))}
	for i := range res.Partitions {
		out.Sizes[i] = len(res.Partitions[i].Batches)
		out.payload = append(out.payload, res.Partitions[i].Batches...)
		out.Partitions[i].Batches = nil
	}
	return out
}

// result cuts the payload back into each partition's batches.
func (r fetchedBatches) result() (api.FetchBatchesResult, error) {
	out := api.FetchBatchesResult{Partitions: r.Partitions}
	if len(r.Sizes) != len(r.Partitions) {
		return out, fmt.Errorf("%d sizes for %d partitions", len(r.Sizes), len(r.Partitions))
	}
	rest := r.payload
	for i, n := range r.Sizes {
		if n < 0 || n > len(rest) {
			return out, fmt.Errorf("partition %d: %d bytes of batches, %d left in the reply", i, n, len(rest))
		}
		out.Partitions[i].Batches, rest = rest[:n:n], rest[n:]
	}
	if len(rest) > 0 {
		return out, fmt.Errorf("%d bytes of batches beyond the partitions'", len(rest))
	}
	return out, nil
}

// serveFetchBatches is opFetchBatches' handler: the partitions are this
// broker's to answer (forwarded requests are never passed on again).
func (b *Broker) serveFetchBatches(ctx context.Context, req api.FetchBatchesRequest) (fetchedBatches, error) {
	res, err := b.FetchBatches(ctx, req)
	if err != nil {
		return fetchedBatches{}, err
	}
	return newFetchedBatches(res), nil
}
