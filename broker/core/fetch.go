package core

import (
	"context"
	"errors"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/memory"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/replica"
	"github.com/kairolog/kairolog/broker/storage"
)

// Fetch defaults.
const (
	defaultFetchRecords = 500
	defaultFetchBytes   = 1 << 20
)

// Fetch reads a partition for a consumer: records below the high watermark,
// from this broker if it leads the partition and otherwise proxied to the
// leader.
func (b *Broker) Fetch(ctx context.Context, args api.FetchRequest) (*api.FetchResult, error) {
	t := b.awaitLeadership(ctx, args.Topic, args.Partition).Topic(args.Topic)
	if t == nil {
		return nil, errUnknownTopic(args.Topic)
	}
	n := int32(len(t.Partitions))
	if args.Partition < 0 || args.Partition >= n {
		return nil, errUnknownPartition(args.Topic, args.Partition, n)
	}
	if args.MaxRecords <= 0 {
		args.MaxRecords = defaultFetchRecords
	}
	if args.MaxBytes <= 0 {
		args.MaxBytes = defaultFetchBytes
	}
	leader := int32(t.Partitions[args.Partition].Leader)
	if leader != b.id && leader >= 0 {
		if IsForwarded(ctx) {
			return nil, leaderNotAvailable("broker %d leads %s-%d; this request was already forwarded", leader, args.Topic, args.Partition)
		}
		return b.proxyFetch(ctx, args, leader, int32(t.Partitions[args.Partition].LeaderEpoch))
	}
	// The replica must hold the topic this image names (topic id).
	ctx = replica.WithTopicID(ctx, t.ID)
	res, err := b.localFetch(ctx, args)
	if err != nil && b.lagging(err, args.Topic, args.Partition) && b.awaitLeader(ctx, args.Topic, args.Partition) {
		res, err = b.localFetch(ctx, args)
	}
	var nl *replica.NotLeaderError
	if errors.As(err, &nl) && nl.Leader >= 0 && nl.Leader != b.id && !IsForwarded(ctx) {
		// Leadership moved before this broker's image showed it.
		return b.proxyFetch(ctx, args, nl.Leader, nl.Epoch)
	}
	return res, apiError(err)
}

func (b *Broker) localFetch(ctx context.Context, args api.FetchRequest) (*api.FetchResult, error) {
	info, err := b.replicas.PartitionInfo(args.Topic, args.Partition)
	if err != nil {
		return nil, err
	}
	offset := args.Offset
	if offset < 0 {
		offset = info.LogStartOffset
	}
	if args.Wait > 0 && offset >= info.HighWatermark {
		// A long poll waits for its first record without holding any of
		// the reply budget: waiting consumers would otherwise take it all.
		probe, err := b.replicas.Fetch(ctx, args.Topic, args.Partition, offset, 1, 1, args.Wait)
		if err != nil {
			return nil, err
		}
		if len(probe.Records) == 0 {
			return b.fetchResult(args, offset, probe), nil
		}
	}
	if err := b.chargeFetch(ctx, &args); err != nil {
		return nil, err
	}
	res, err := b.replicas.Fetch(ctx, args.Topic, args.Partition, offset, args.MaxBytes, args.MaxRecords, 0)
	if err != nil {
		return nil, err
	}
	return b.fetchResult(args, offset, res), nil
}

// fetchResult is what a consumer is answered from a replica's read.
func (b *Broker) fetchResult(args api.FetchRequest, offset int64, res replica.FetchResult) *api.FetchResult {
	out := &api.FetchResult{Topic: args.Topic, Partition: args.Partition, Records: apiRecords(res.Records),
		HighWatermark: res.HighWatermark, LogStartOffset: res.LogStartOffset, NextOffset: offset}
	if k := len(res.Records); k > 0 {
		out.NextOffset = res.Records[k-1].Offset + 1
	}
	return out
}

// apiRecords are records read from a log as the core answers them (the
// bytes are shared, not copied).
func apiRecords(recs []storage.Record) []api.Record {
	out := make([]api.Record, len(recs))
	for i, r := range recs {
		out[i] = api.Record{Offset: r.Offset, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value,
			Headers: apiHeaders(r.Headers)}
	}
	return out
}

// opFetch passes a fetch on to the partition's leader.
var opFetch = peer.NewOp[api.FetchRequest, api.FetchResult]("core/fetch")

func (b *Broker) proxyFetch(ctx context.Context, args api.FetchRequest, leader, epoch int32) (*api.FetchResult, error) {
	resp, err := forward(ctx, b, leader, epoch, opFetch, args, api.CodeLeaderNotAvailable)
	if err != nil {
		return nil, err
	}
	if err := b.chargeProxiedFetch(ctx, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// serveFetch is opFetch's handler.
func (b *Broker) serveFetch(ctx context.Context, req api.FetchRequest) (api.FetchResult, error) {
	res, err := b.Fetch(ctx, req)
	if err != nil {
		return api.FetchResult{}, err
	}
	return *res, nil
}

// fetchRecordOverhead is what a fetched record takes besides its bytes:
// its storage.Record and its share of the reply.
const fetchRecordOverhead = 96

// chargeFetch charges the request's account, before a local read, with
// the reply memory a fetch of args' limits can take: the bytes read (at
// least one record, even one past max_bytes), the records decoded from
// them and the reply built from those, about three times the bytes, plus
// the records themselves. One fetch may take at most half of the budget:
// its max_bytes and max_records are lowered to fit (they are upper bounds).
func (b *Broker) chargeFetch(ctx context.Context, args *api.FetchRequest) error {
	acct := memory.AccountFrom(ctx)
	if acct == nil {
		return nil
	}
	pool := b.memory.Responses
	quarter := pool.Size() / 4
	args.MaxBytes = int(min(int64(args.MaxBytes), max(quarter/3, 1)))
	args.MaxRecords = int(min(int64(args.MaxRecords), max(quarter/fetchRecordOverhead, 1)))
	n := 3*max(int64(args.MaxBytes), int64(b.settings.MessageMaxBytes)) + int64(args.MaxRecords)*fetchRecordOverhead
	return acct.Charge(pool, n)
}

// chargeProxiedFetch charges the request's account with the reply memory
// of a fetch another broker answered, now that its size is known. (The
// leader charged its own budget before reading, which bounds how many such
// replies can be on their way at once.)
func (b *Broker) chargeProxiedFetch(ctx context.Context, resp *api.FetchResult) error {
	n := int64(len(resp.Records)) * fetchRecordOverhead
	for _, r := range resp.Records {
		n += 3 * int64(len(r.Value)+len(r.Key))
	}
	return memory.AccountFrom(ctx).Charge(b.memory.Responses, n)
}
