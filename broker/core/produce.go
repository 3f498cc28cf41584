package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
	"github.com/kairolog/kairolog/broker/memory"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/replica"
	"github.com/kairolog/kairolog/broker/storage"
	"github.com/kairolog/kairolog/broker/topicconfig"
)

// defaultProduceTimeout is the acks=all wait when the request gives none.
const defaultProduceTimeout = 30 * time.Second

// Produce appends records to a topic. Records without a partition are
// placed by Kafka's default partitioner (murmur2 of the key) or round robin;
// the records of each partition are written as one batch, by this broker if
// it leads the partition and otherwise by the leader, to which the batch is
// proxied (once: a forwarded request is never forwarded again).
//
// Each partition's batch succeeds or fails on its own, as in Kafka's
// ProduceResponse: the positions, one per record in request order, say
// where each record was stored or carry its partition's error (see
// api.Position). The error is nil only when every record was stored as asked;
// otherwise it is the error of one failed partition (produceError says
// which). Positions are nil when the request failed before anything was
// written (unknown topic, bad partition).
func (b *Broker) Produce(ctx context.Context, args api.ProduceRequest) ([]api.Position, error) {
	// A forwarded request names a partition the forwarding broker saw this
	// one lead; wait for this broker's image to catch up with that.
	if len(args.Records) > 0 && IsForwarded(ctx) && args.Records[0].Partition != api.AnyPartition {
		b.awaitLeadership(ctx, args.Topic, args.Records[0].Partition)
	}
	t, err := b.writableTopic(args.Topic)
	if api.IsCode(err, api.CodeUnknownTopic) && b.settings.AutoCreateTopics {
		_, cerr := b.CreateTopic(ctx, api.CreateTopicRequest{Name: args.Topic})
		if cerr != nil && !api.IsCode(cerr, api.CodeTopicAlreadyExists) {
			return nil, cerr
		}
		t, err = b.writableTopic(args.Topic)
	}
	if err != nil {
		return nil, err
	}
	if args.Timeout <= 0 {
		args.Timeout = defaultProduceTimeout
	}
	if args.Producer != nil {
		if err := b.checkProducer(ctx, args.Producer); err != nil {
			return nil, err
		}
	}
	n := int32(len(t.Partitions))
	parts := make([]int32, len(args.Records))
	// Keyless records of one request share one partition, the next in turn:
	// round robin per request keeps a batch one append (Kafka's sticky
	// partitioner does the same per batch).
	keyless := int32(-1)
	for i := range args.Records {
		p := args.Records[i].Partition
		switch {
		case p == api.AnyPartition && args.Records[i].Key != nil:
			p = api.KeyPartition(args.Records[i].Key, n)
		case p == api.AnyPartition && args.Producer != nil:
			// Round robin could send the retry elsewhere, where its
			// sequence means nothing.
			return nil, api.Errorf(api.CodeInvalidArgument,
				"an idempotent produce names the partition of a record without a key, so that a retry reaches the same partition")
		case p == api.AnyPartition:
			if keyless < 0 {
				keyless = b.roundRobin(args.Topic).pick(n)
			}
			p = keyless
		case p < 0 || p >= n:
			return nil, errUnknownPartition(args.Topic, p, n)
		}
		parts[i] = p
	}
	if args.Producer != nil && !single(parts) {
		return nil, api.Errorf(api.CodeInvalidArgument,
			"an idempotent produce writes to one partition (its sequence counts that partition's records); these records go to several")
	}
	positions := make([]api.Position, len(args.Records))
	// The common case, one partition, runs on the request's goroutine.
	if single(parts) {
		err := b.produceBatch(ctx, t, args, parts[0], allIndexes(len(parts)), positions)
		return positions, err
	}
	byPart := map[int32][]int{}
	for i, p := range parts {
		byPart[p] = append(byPart[p], i)
	}
	var wg sync.WaitGroup
	for p, idx := range byPart {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = b.produceBatch(ctx, t, args, p, idx, positions) // recorded in positions
		}()
	}
	wg.Wait()
	return positions, produceError(positions)
}

// produceError is the error of a produce whose records span partitions,
// or nil when every record was stored as asked. It names the failed
// partitions and carries the code of one of them: a failure that retrying
// cannot cure (a batch too large) before a retriable one, so that a
// client retrying on the code does not retry in vain; otherwise the first
// failure in request order.
func produceError(positions []api.Position) error {
	var chosen *api.Position
	var failed []int32
	stored := 0
	for i := range positions {
		pos := &positions[i]
		if pos.Stored() {
			stored++
		}
		if pos.Err == nil {
			continue
		}
		if !slices.Contains(failed, pos.Partition) {
			failed = append(failed, pos.Partition)
		}
		if chosen == nil || (retriable(chosen.Err) && !retriable(pos.Err)) {
			chosen = pos
		}
	}
	if chosen == nil {
		return nil
	}
	slices.Sort(failed)
	prefix := fmt.Sprintf("partition %d", chosen.Partition)
	if len(failed) > 1 {
		prefix = fmt.Sprintf("partitions %v failed; partition %d", failed, chosen.Partition)
	}
	if stored > 0 {
		prefix = fmt.Sprintf("%d of %d records stored; %s", stored, len(positions), prefix)
	}
	var ce *api.Error
	if !errors.As(chosen.Err, &ce) {
		return fmt.Errorf("%s: %w", prefix, chosen.Err)
	}
	e := *ce
	e.Message = prefix + ": " + ce.Message
	return &e
}

// retriable reports an error a client may retry as it is.
func retriable(err error) bool {
	var ce *api.Error
	return errors.As(err, &ce) && ce.Retriable()
}

// writableTopic returns a topic clients may produce to.
func (b *Broker) writableTopic(name string) (*metadata.Topic, error) {
	t := b.image().Topic(name)
	if t == nil {
		return nil, errUnknownTopic(name)
	}
	if t.Internal {
		return nil, api.Errorf(api.CodeInvalidArgument, "topic %q is internal; clients cannot write to it", name)
	}
	return t, nil
}

func single(parts []int32) bool {
	for _, p := range parts[1:] {
		if p != parts[0] {
			return false
		}
	}
	return true
}

func allIndexes(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// produceBatch writes the records at idx to partition p and fills their
// positions; on failure it also returns the positions' error.
func (b *Broker) produceBatch(ctx context.Context, t *metadata.Topic, args api.ProduceRequest, p int32, idx []int, positions []api.Position) error {
	if err := b.checkBatchBytes(t, args, idx); err != nil {
		failAll(positions, p, idx, err)
		return err
	}
	leader := int32(t.Partitions[p].Leader)
	var err error
	switch {
	case leader == b.id || leader < 0:
		// The replica must hold the topic this image names (topic id).
		return b.appendLocal(replica.WithTopicID(ctx, t.ID), args, p, idx, positions)
	case IsForwarded(ctx):
		err = leaderNotAvailable("broker %d leads %s-%d; this request was already forwarded", leader, args.Topic, p)
	default:
		return b.proxyProduce(ctx, args, p, leader, int32(t.Partitions[p].LeaderEpoch), idx, positions)
	}
	failAll(positions, p, idx, err)
	return err
}

// checkBatchBytes refuses the records at idx when their keys and values
// alone exceed the topic's max.message.bytes: the leader would refuse their
// batch whatever it adds, so every broker answers RECORD_TOO_LARGE at once,
// also while the partition's leader is away, rather than a retriable error
// that a retry cannot cure.
func (b *Broker) checkBatchBytes(t *metadata.Topic, args api.ProduceRequest, idx []int) error {
	size := 0
	for _, i := range idx {
		size += len(args.Records[i].Key) + len(args.Records[i].Value)
	}
	if limit := maxBatchBytes(b.settings, t.Config); size > limit {
		return apiError(fmt.Errorf("%w: keys and values alone are %d bytes, limit %d", storage.ErrBatchTooLarge, size, limit))
	}
	return nil
}

// appendLocal appends the records at idx to this broker's replica of
// partition p, or proxies them to the leader it names.
func (b *Broker) appendLocal(ctx context.Context, args api.ProduceRequest, p int32, idx []int, positions []api.Position) error {
	recs := make([]storage.Record, len(idx))
	for j, i := range idx {
		r := &args.Records[i]
		recs[j] = storage.Record{Timestamp: r.Timestamp, Key: r.Key, Value: r.Value, Headers: storageHeaders(r.Headers)}
	}
	batch := replica.Batch{Records: recs, Options: storage.BatchOptions{Compression: b.compression(args.Topic),
		Producer: storageProducer(args.Producer)}}
	res, err := b.writeLocal(ctx, args.Topic, p, batch, args.Acks, args.Timeout)
	base := res.BaseOffset
	var nl *replica.NotLeaderError
	if errors.As(err, &nl) && nl.Leader >= 0 && nl.Leader != b.id && !IsForwarded(ctx) {
		return b.proxyProduce(ctx, args, p, nl.Leader, nl.Epoch, idx, positions)
	}
	if err != nil && !errors.Is(err, replica.ErrNotEnoughReplicasAfterAppend) {
		err = apiError(err)
		failAll(positions, p, idx, err)
		return err
	}
	// Stored; with ErrNotEnoughReplicasAfterAppend the batch is committed
	// but on fewer replicas than asked for, and the producer learns both.
	err = apiError(err)
	for j, i := range idx {
		positions[i] = api.Position{Partition: p, Offset: base + int64(j), Err: err, Duplicate: res.Duplicate}
	}
	return err
}

// writeLocal appends batch to this broker's replica of topic-p, once
// more after the replica has caught up with a leadership this broker's
// metadata gave it first.
func (b *Broker) writeLocal(ctx context.Context, topic string, p int32, batch replica.Batch, acks api.Acks, timeout time.Duration) (storage.AppendResult, error) {
	a := replica.Acks(1)
	if acks == api.AcksAll {
		a = replica.AcksAll
	}
	res, err := b.replicas.ProduceBatch(ctx, topic, p, batch, a, timeout)
	if err != nil && b.lagging(err, topic, p) && b.awaitLeader(ctx, topic, p) {
		res, err = b.replicas.ProduceBatch(ctx, topic, p, batch, a, timeout)
	}
	return res, err
}

// compression is the codec of the batches an HTTP produce writes to
// topic: its compression.type, else the broker's. "producer" keeps what
// the producer sent, and an HTTP producer sends no compressed batch.
func (b *Broker) compression(topic string) storage.Compression {
	name := b.settings.CompressionType
	if t := b.image().Topic(topic); t != nil {
		if v, ok := t.Config[topicconfig.CompressionType]; ok {
			name = v
		}
	}
	c, _ := storage.ParseCompression(name)
	return c
}

// failAll records err as the outcome of the records at idx, none of which
// is stored.
func failAll(positions []api.Position, p int32, idx []int, err error) {
	for _, i := range idx {
		positions[i] = api.Position{Partition: p, Offset: -1, Err: err}
	}
}

// opProduce passes one partition's records on to its leader; the leader
// answers where each record is, stored or not. Brokers now send
// opProduceRecords (forwardproduce.go), and this one to a leader without
// it.
var opProduce = peer.NewOp[api.ProduceRequest, producedPositions]("core/produce")

// producedPositions is a produce's answer between brokers: one position per
// record, with its partition's code and message when it failed.
type producedPositions struct {
	Records []api.RecordPosition `json:"records"`
}

// proxyProduce sends one partition's records to its leader and takes the
// leader's answer for each record.
func (b *Broker) proxyProduce(ctx context.Context, args api.ProduceRequest, p, leader, epoch int32, idx []int, positions []api.Position) error {
	req := api.ProduceRequest{Topic: args.Topic, Acks: args.Acks, Timeout: args.Timeout, Producer: args.Producer,
		Records: args.Records}
	if len(idx) < len(args.Records) {
		// Records of several partitions: this one's, on their own.
		req.Records = make([]api.ProduceRecord, len(idx))
		for j, i := range idx {
			req.Records[j] = args.Records[i]
		}
	}
	for j := range req.Records {
		// Every record of the request goes to p (a batch of keyless
		// records, one partition's records): they are this request's.
		req.Records[j].Partition = p
	}
	addr, err := b.peerAddress(leader)
	var answered []api.RecordPosition
	if err == nil {
		answered, err = b.forwards.produce(ctx, addr, epoch, req, p)
		if errors.Is(err, errLeaderMoved) {
			return b.produceRerouted(ctx, args, p, idx, positions)
		}
		err = peerError(err, api.CodeLeaderNotAvailable, leader)
	}
	if err == nil && len(answered) != len(idx) {
		err = api.Errorf(api.CodeInternal, "broker %d answered %d positions for %d records", leader, len(answered), len(idx))
	}
	if err != nil {
		failAll(positions, p, idx, err)
		return err
	}
	var firstErr error
	for j, i := range idx {
		rec := answered[j]
		var rerr error
		if rec.Code != "" {
			e := api.Errorf(rec.Code, "%s", rec.Error)
			if e.Retriable() {
				e.RetryAfterMs = 500
			}
			rerr = e
			firstErr = cmp.Or(firstErr, rerr)
		}
		positions[i] = api.Position{Partition: rec.Partition, Offset: rec.Offset, Err: rerr, Duplicate: rec.Duplicate}
	}
	return firstErr
}

// produceRerouted routes records again whose leader moved on while they
// waited to be passed on (leadersMoved), by the newer metadata: to the new
// leader, or into this broker's own replica. Each time needs a newer
// leader epoch, so this ends.
func (b *Broker) produceRerouted(ctx context.Context, args api.ProduceRequest, p int32, idx []int, positions []api.Position) error {
	t := b.image().Topic(args.Topic)
	var err error
	switch {
	case t == nil:
		err = errUnknownTopic(args.Topic)
	case int(p) >= len(t.Partitions):
		err = errUnknownPartition(args.Topic, p, int32(len(t.Partitions)))
	default:
		return b.produceBatch(ctx, t, args, p, idx, positions)
	}
	failAll(positions, p, idx, err)
	return err
}

// serveProduce is opProduce's handler: the request produced here, each
// record's position answered with its partition's code.
func (b *Broker) serveProduce(ctx context.Context, req api.ProduceRequest) (producedPositions, error) {
	if err := b.chargeForwarded(ctx, req); err != nil {
		return producedPositions{}, err
	}
	positions, err := b.Produce(ctx, req)
	if positions == nil {
		return producedPositions{}, err
	}
	out := producedPositions{Records: make([]api.RecordPosition, len(positions))}
	for i, p := range positions {
		out.Records[i] = api.RecordPosition{Partition: p.Partition, Offset: p.Offset, Duplicate: p.Duplicate}
		if p.Err != nil {
			e, _ := AsAPIError(p.Err)
			if e == nil {
				return producedPositions{}, p.Err // a bug: answered INTERNAL
			}
			out.Records[i].Code, out.Records[i].Error = e.Code, e.Message
		}
	}
	return out, nil
}

// forwardedRecordOverhead is what one forwarded record takes besides its
// bytes once decoded: its ProduceRecord and its share of the request.
const forwardedRecordOverhead = 128

// chargeForwarded charges the request's account with what a produce
// passed on from another broker holds: its records, decoded. (The
// forwarding broker charged its own budget for the client's body.)
func (b *Broker) chargeForwarded(ctx context.Context, req api.ProduceRequest) error {
	n := int64(len(req.Records)) * forwardedRecordOverhead
	for _, r := range req.Records {
		n += int64(len(r.Key) + len(r.Value))
		for _, h := range r.Headers {
			n += int64(len(h.Key) + len(h.Value))
		}
	}
	return memory.AccountFrom(ctx).Charge(b.memory.Requests, 2*n)
}

// storageHeaders are a record's headers as the log stores them.
func storageHeaders(hs []api.Header) []storage.Header {
	if len(hs) == 0 {
		return nil
	}
	out := make([]storage.Header, len(hs))
	for i, h := range hs {
		out[i] = storage.Header{Key: h.Key, Value: h.Value}
	}
	return out
}

// apiHeaders are a stored record's headers as the core answers them (the
// bytes are shared, not copied).
func apiHeaders(hs []storage.Header) []api.Header {
	if len(hs) == 0 {
		return nil
	}
	out := make([]api.Header, len(hs))
	for i, h := range hs {
		out[i] = api.Header{Key: h.Key, Value: h.Value}
	}
	return out
}

// roundRobin returns the topic's keyless-record counter.
func (b *Broker) roundRobin(topic string) *roundRobin {
	if rr, ok := b.rr.Load(topic); ok {
		return rr.(*roundRobin)
	}
	rr, _ := b.rr.LoadOrStore(topic, &roundRobin{})
	return rr.(*roundRobin)
}
