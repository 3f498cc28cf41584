package broker

import (
	"context"
	"encoding/base64"
	"errors"

	"github.com/kairolog/kairolog/broker/client"
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
func (b *Broker) Fetch(ctx context.Context, args FetchArgs) (*FetchResult, error) {
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

func (b *Broker) localFetch(ctx context.Context, args FetchArgs) (*FetchResult, error) {
	offset := args.Offset
	if offset < 0 {
		info, err := b.replicas.PartitionInfo(args.Topic, args.Partition)
		if err != nil {
			return nil, err
		}
		offset = info.LogStartOffset
	}
	res, err := b.replicas.Fetch(ctx, args.Topic, args.Partition, offset, args.MaxBytes, args.MaxRecords, args.Wait)
	if err != nil {
		return nil, err
	}
	out := &FetchResult{Topic: args.Topic, Partition: args.Partition, Records: res.Records,
		HighWatermark: res.HighWatermark, LogStartOffset: res.LogStartOffset, NextOffset: offset}
	if k := len(res.Records); k > 0 {
		out.NextOffset = res.Records[k-1].Offset + 1
	}
	return out, nil
}

func (b *Broker) proxyFetch(ctx context.Context, args FetchArgs, leader, epoch int32) (*FetchResult, error) {
	pc, err := b.peer(leader)
	if err != nil {
		return nil, err
	}
	pc = withEpoch(pc, epoch)
	resp, err := pc.Fetch(ctx, client.FetchRequest{Topic: args.Topic, Partition: args.Partition, Offset: args.Offset,
		MaxRecords: args.MaxRecords, MaxBytes: args.MaxBytes, WaitMs: int(args.Wait.Milliseconds()), Encoding: client.EncodingBase64})
	if err != nil {
		return nil, peerError(err, client.CodeLeaderNotAvailable, leader)
	}
	out := &FetchResult{Topic: resp.Topic, Partition: resp.Partition, HighWatermark: resp.HighWatermark,
		LogStartOffset: resp.LogStartOffset, NextOffset: resp.NextOffset, Records: make([]storage.Record, len(resp.Records))}
	dec := base64.StdEncoding
	for i, r := range resp.Records {
		rec := storage.Record{Offset: r.Offset, Timestamp: r.Timestamp}
		if rec.Value, err = dec.DecodeString(r.Message); err != nil {
			return nil, client.Errorf(client.CodeInternal, "broker %d sent a record that is not base64: %v", leader, err)
		}
		if r.Key != nil {
			if rec.Key, err = dec.DecodeString(*r.Key); err != nil {
				return nil, client.Errorf(client.CodeInternal, "broker %d sent a key that is not base64: %v", leader, err)
			}
		}
		for k, v := range r.Headers {
			hv, err := dec.DecodeString(v)
			if err != nil {
				return nil, client.Errorf(client.CodeInternal, "broker %d sent a header that is not base64: %v", leader, err)
			}
			rec.Headers = append(rec.Headers, storage.Header{Key: k, Value: hv})
		}
		sortHeaders(rec.Headers)
		out.Records[i] = rec
	}
	return out, nil
}

func sortHeaders(h []storage.Header) {
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && h[j].Key < h[j-1].Key; j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}
