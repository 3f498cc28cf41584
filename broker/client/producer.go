package client

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// Producer is an idempotent producer of one topic: it sends each
// partition's records with the producer id the cluster gave it and the
// partition's next sequence number, and resends a request that timed out,
// could not be sent or was refused with a retriable error (503) with the
// same sequence, so that the records are stored once however often they
// are sent (docs/api.md, Idempotent produce). A Producer is not safe for
// concurrent use: it keeps one request in flight, so that sequences reach
// every partition in order.
type Producer struct {
	c     *Client
	topic string
	opts  ProducerOptions
	id    api.Producer
	// next is each partition's next sequence number.
	next       map[int32]int32
	partitions int32
	rr         int32
	stats      ProducerStats
}

// ProducerOptions tune a Producer. The zero value sends with acks=1 and
// retries for up to 2 minutes.
type ProducerOptions struct {
	Acks      string // AcksLeader (default) or AcksAll
	TimeoutMs int64  // acks=all wait per attempt; 0 is the broker's 30 s
	// RetryFor bounds how long one Send keeps retrying; 0 is 2 minutes.
	RetryFor time.Duration
	// AttemptTimeout bounds one attempt; 0 is the client's timeout (plus
	// the acks=all wait).
	AttemptTimeout time.Duration
}

// ProducerStats count what a Producer did.
type ProducerStats struct {
	// Requests sent, including retries; Retries those that were resends.
	Requests, Retries atomic.Int64
	// Duplicates are resends the broker answered as already stored: each
	// would have been a duplicate record without the producer id.
	Duplicates atomic.Int64
	// EpochBumps count the times the producer started a new epoch after
	// a partition lost records it had acknowledged (acks=1 and a leader
	// failover), which breaks the sequence.
	EpochBumps atomic.Int64
}

// NewIdempotentProducer returns an idempotent producer of topic with a
// fresh producer id (POST /producers).
func (c *Client) NewIdempotentProducer(ctx context.Context, topic string, opts ProducerOptions) (*Producer, error) {
	if opts.RetryFor <= 0 {
		opts.RetryFor = 2 * time.Minute
	}
	if opts.Acks == "" {
		opts.Acks = AcksLeader
	}
	p := &Producer{c: c, topic: topic, opts: opts, next: map[int32]int32{}}
	if err := p.refreshPartitions(ctx); err != nil {
		return nil, err
	}
	id, err := c.NewProducer(ctx)
	if err != nil {
		return nil, err
	}
	p.id = id
	return p, nil
}

// ID is the producer's id and epoch.
func (p *Producer) ID() api.Producer { return p.id }

// Stats are the producer's counters.
func (p *Producer) Stats() *ProducerStats { return &p.stats }

func (p *Producer) refreshPartitions(ctx context.Context) error {
	d, err := p.c.DescribeTopic(ctx, p.topic)
	if err != nil {
		return err
	}
	p.partitions = int32(len(d.Partitions))
	return nil
}

// Send stores records, each exactly once: a record's Partition if set,
// else Kafka's partition for its key, else the next partition in turn for
// the keyless records of this call. The records of each partition go as
// one request, partition by partition; it returns where each record is,
// in order. On an error that retrying cannot cure, the records of that
// partition and the ones after it are not stored (their positions are
// not Stored), and the producer may be used again.
func (p *Producer) Send(ctx context.Context, records []ProduceRecord) ([]api.RecordPosition, error) {
	out := make([]api.RecordPosition, len(records))
	for i := range out {
		out[i] = api.RecordPosition{Partition: -1, Offset: -1}
	}
	var order []int32
	byPart := map[int32][]int{}
	keyless := int32(-1)
	for i, r := range records {
		var part int32
		switch {
		case r.Partition != nil:
			part = *r.Partition
		case r.Key != nil:
			part = api.KeyPartition([]byte(*r.Key), p.partitions)
		default:
			if keyless < 0 {
				keyless = p.rr % p.partitions
				p.rr++
			}
			part = keyless
		}
		if _, ok := byPart[part]; !ok {
			order = append(order, part)
		}
		byPart[part] = append(byPart[part], i)
	}
	for _, part := range order {
		idx := byPart[part]
		recs := make([]ProduceRecord, len(idx))
		for j, i := range idx {
			recs[j] = records[i]
			recs[j].Partition = &part
		}
		resp, err := p.send(ctx, part, recs)
		if resp != nil {
			for j, i := range idx {
				out[i] = resp.position(j, part)
			}
		}
		if err != nil {
			var e *api.Error
			if errors.As(err, &e) {
				for _, i := range idx {
					if !out[i].Stored() && out[i].Code == "" {
						out[i].Partition, out[i].Code, out[i].Error = part, e.Code, e.Message
					}
				}
			}
			return out, err
		}
	}
	return out, nil
}

// position is where record j of a reply is.
func (r *ProduceResponse) position(j int, part int32) api.RecordPosition {
	if r.Records != nil {
		return r.Records[j]
	}
	pos := api.RecordPosition{Partition: part, Offset: -1, Duplicate: r.Duplicate}
	if r.Offset != nil {
		pos.Offset = *r.Offset
	}
	return pos
}

// send stores one partition's records, retrying with the same sequence.
func (p *Producer) send(ctx context.Context, part int32, recs []ProduceRecord) (*ProduceResponse, error) {
	deadline := time.Now().Add(p.opts.RetryFor)
	backoff := 50 * time.Millisecond
	for attempt := 0; ; attempt++ {
		seq := p.next[part]
		req := ProduceRequest{Topic: p.topic, Records: recs, Acks: p.opts.Acks, TimeoutMs: p.opts.TimeoutMs,
			ProducerID: &p.id.ID, ProducerEpoch: &p.id.Epoch, Sequence: &seq}
		p.stats.Requests.Add(1)
		if attempt > 0 {
			p.stats.Retries.Add(1)
		}
		actx, cancel := ctx, context.CancelFunc(func() {})
		if p.opts.AttemptTimeout > 0 {
			actx, cancel = context.WithTimeout(ctx, p.opts.AttemptTimeout)
		}
		resp, err := p.c.Produce(actx, req)
		cancel()
		var e *api.Error
		switch {
		case err == nil || api.IsCode(err, api.CodeNotEnoughReplicasAfterAppend):
			// Stored (with less replication than asked for, in the
			// second case: sent again, it would only be a duplicate).
			p.next[part] = nextSequence(seq, len(recs))
			if resp.Duplicate {
				p.stats.Duplicates.Add(1)
			}
			return resp, err
		case api.IsCode(err, api.CodeOutOfOrderSequence):
			// The partition lost records it had acknowledged (acks=1 and
			// a failover): a new epoch starts every partition at 0, and
			// these records were not written.
			if err := p.bumpEpoch(ctx); err != nil {
				return nil, err
			}
			continue
		case api.IsCode(err, api.CodeUnknownPartition) && attempt == 0:
			if rerr := p.refreshPartitions(ctx); rerr != nil {
				return nil, rerr
			}
		case errors.As(err, &e) && !e.Retriable():
			return resp, err
		case ctx.Err() != nil:
			return nil, err
		}
		// Timed out, not sent, or a retriable refusal: the records may or
		// may not be stored; the same sequence makes sending them again
		// safe.
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("produce to %s-%d: still failing after %v: %w", p.topic, part, p.opts.RetryFor, err)
		}
		wait := backoff
		if errors.As(err, &e) && e.RetryAfterMs > 0 {
			wait = time.Duration(e.RetryAfterMs) * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// bumpEpoch moves the producer to its next epoch, or to a new producer id
// once the epoch would overflow, and starts every partition at 0.
func (p *Producer) bumpEpoch(ctx context.Context) error {
	p.stats.EpochBumps.Add(1)
	clear(p.next)
	if p.id.Epoch < math.MaxInt16 {
		p.id.Epoch++
		return nil
	}
	id, err := p.c.NewProducer(ctx)
	if err != nil {
		return err
	}
	p.id = id
	return nil
}

// nextSequence is the sequence after n records from seq, wrapping past
// MaxInt32 to 0 as the broker counts.
func nextSequence(seq int32, n int) int32 {
	next := int64(seq) + int64(n)
	if next > math.MaxInt32 {
		next -= math.MaxInt32 + 1
	}
	return int32(next)
}
