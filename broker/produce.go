package broker

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
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
// Position). The error is nil only when every record was stored as asked;
// otherwise it is the error of one failed partition (produceError says
// which). Positions are nil when the request failed before anything was
// written (unknown topic, bad partition).
func (b *Broker) Produce(ctx context.Context, args ProduceArgs) ([]Position, error) {
	// A forwarded request names a partition the forwarding broker saw this
	// one lead; wait for this broker's image to catch up with that.
	if len(args.Records) > 0 && IsForwarded(ctx) && args.Records[0].Partition != AnyPartition {
		b.awaitLeadership(ctx, args.Topic, args.Records[0].Partition)
	}
	t, err := b.writableTopic(args.Topic)
	if client.IsCode(err, client.CodeUnknownTopic) && b.settings.AutoCreateTopics {
		_, cerr := b.CreateTopic(ctx, TopicSpec{Name: args.Topic})
		if cerr != nil && !client.IsCode(cerr, client.CodeTopicAlreadyExists) {
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
	n := int32(len(t.Partitions))
	parts := make([]int32, len(args.Records))
	// Keyless records of one request share one partition, the next in turn:
	// round robin per request keeps a batch one append (Kafka's sticky
	// partitioner does the same per batch).
	keyless := int32(-1)
	for i := range args.Records {
		p := args.Records[i].Partition
		switch {
		case p == AnyPartition && args.Records[i].Key != nil:
			p = keyPartition(args.Records[i].Key, n)
		case p == AnyPartition:
			if keyless < 0 {
				keyless = b.roundRobin(args.Topic).pick(n)
			}
			p = keyless
		case p < 0 || p >= n:
			return nil, errUnknownPartition(args.Topic, p, n)
		}
		parts[i] = p
	}
	positions := make([]Position, len(args.Records))
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
func produceError(positions []Position) error {
	var chosen *Position
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
	var ce *client.Error
	if !errors.As(chosen.Err, &ce) {
		return fmt.Errorf("%s: %w", prefix, chosen.Err)
	}
	e := *ce
	e.Message = prefix + ": " + ce.Message
	return &e
}

// retriable reports an error a client may retry as it is.
func retriable(err error) bool {
	var ce *client.Error
	return errors.As(err, &ce) && ce.Retriable()
}

// writableTopic returns a topic clients may produce to.
func (b *Broker) writableTopic(name string) (*metadata.Topic, error) {
	t := b.image().Topic(name)
	if t == nil {
		return nil, errUnknownTopic(name)
	}
	if t.Internal {
		return nil, client.Errorf(client.CodeInvalidArgument, "topic %q is internal; clients cannot write to it", name)
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
func (b *Broker) produceBatch(ctx context.Context, t *metadata.Topic, args ProduceArgs, p int32, idx []int, positions []Position) error {
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

// appendLocal appends the records at idx to this broker's replica of
// partition p, or proxies them to the leader it names.
func (b *Broker) appendLocal(ctx context.Context, args ProduceArgs, p int32, idx []int, positions []Position) error {
	recs := make([]storage.Record, len(idx))
	for j, i := range idx {
		r := &args.Records[i]
		recs[j] = storage.Record{Timestamp: r.Timestamp, Key: r.Key, Value: r.Value, Headers: r.Headers}
	}
	acks := replica.Acks(1)
	if args.Acks == AcksAll {
		acks = replica.AcksAll
	}
	batch := replica.Batch{Records: recs, Options: storage.BatchOptions{Compression: b.compression(args.Topic)}}
	res, err := b.replicas.ProduceBatch(ctx, args.Topic, p, batch, acks, args.Timeout)
	if err != nil && b.lagging(err, args.Topic, p) && b.awaitLeader(ctx, args.Topic, p) {
		res, err = b.replicas.ProduceBatch(ctx, args.Topic, p, batch, acks, args.Timeout)
	}
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
		positions[i] = Position{Partition: p, Offset: base + int64(j), Err: err}
	}
	return err
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
func failAll(positions []Position, p int32, idx []int, err error) {
	for _, i := range idx {
		positions[i] = Position{Partition: p, Offset: -1, Err: err}
	}
}

// proxyProduce sends one partition's records to its leader, base64-encoded
// so that any bytes survive JSON, and takes the leader's answer for each
// record.
func (b *Broker) proxyProduce(ctx context.Context, args ProduceArgs, p, leader, epoch int32, idx []int, positions []Position) error {
	pc, err := b.peer(leader)
	if err != nil {
		failAll(positions, p, idx, err)
		return err
	}
	pc = withEpoch(pc, epoch)
	req := client.ProduceRequest{Topic: args.Topic, Acks: client.AcksLeader, Encoding: client.EncodingBase64,
		TimeoutMs: args.Timeout.Milliseconds(), Records: make([]client.ProduceRecord, len(idx))}
	if args.Acks == AcksAll {
		req.Acks = client.AcksAll
	}
	enc := base64.StdEncoding
	for j, i := range idx {
		r := &args.Records[i]
		pr := client.ProduceRecord{Partition: &p, Value: enc.EncodeToString(r.Value), Timestamp: r.Timestamp}
		if r.Key != nil {
			k := enc.EncodeToString(r.Key)
			pr.Key = &k
		}
		if len(r.Headers) > 0 {
			pr.Headers = make(map[string]string, len(r.Headers))
			for _, h := range r.Headers {
				pr.Headers[h.Key] = enc.EncodeToString(h.Value)
			}
		}
		req.Records[j] = pr
	}
	resp, err := pc.Produce(ctx, req)
	if err != nil && len(resp.Records) == len(idx) {
		// The leader said where each record is (stored with fewer
		// replicas than asked for, or not stored): pass that on.
		var firstErr error
		for j, i := range idx {
			rec := resp.Records[j]
			var rerr error
			if rec.Code != "" {
				e := client.Errorf(rec.Code, "%s", rec.Error)
				if e.Retriable() {
					e.RetryAfterMs = 500
				}
				rerr = e
				firstErr = cmp.Or(firstErr, rerr)
			}
			positions[i] = Position{Partition: rec.Partition, Offset: rec.Offset, Err: rerr}
		}
		return cmp.Or(firstErr, err)
	}
	if err != nil {
		err = peerError(err, client.CodeLeaderNotAvailable, leader)
		failAll(positions, p, idx, err)
		return err
	}
	if len(resp.Records) != len(idx) {
		err := client.Errorf(client.CodeInternal, "broker %d answered %d positions for %d records", leader, len(resp.Records), len(idx))
		failAll(positions, p, idx, err)
		return err
	}
	for j, i := range idx {
		positions[i] = Position{Partition: resp.Records[j].Partition, Offset: resp.Records[j].Offset}
	}
	return nil
}

func leaderNotAvailable(format string, args ...any) error {
	e := client.Errorf(client.CodeLeaderNotAvailable, format, args...)
	e.RetryAfterMs = 500
	return e
}

// roundRobin returns the topic's keyless-record counter.
func (b *Broker) roundRobin(topic string) *roundRobin {
	if rr, ok := b.rr.Load(topic); ok {
		return rr.(*roundRobin)
	}
	rr, _ := b.rr.LoadOrStore(topic, &roundRobin{})
	return rr.(*roundRobin)
}
