package core

import (
	"context"
	"errors"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
	"github.com/kairolog/kairolog/broker/memory"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/replica"
	"github.com/kairolog/kairolog/broker/storage"
)

// Forwarded produces in Kafka's record format. A broker passes the records
// of one partition on to the partition's leader (proxyProduce) in one peer
// request. opProduce sends them as api.ProduceRequest JSON: every key and
// value in base64, every record an object the leader decodes by
// reflection, and one position object per record back; under batched HTTP
// produces through a broker that does not lead, that encoding was the
// largest cost of both brokers (docs/benchmarks.md). opProduceRecords
// sends the same request with its records as the peer payload, each in
// Kafka's record encoding (storage.AppendSection: timestamp, key, value,
// headers; the leader reads keys and values in place), and answers with runs of
// consecutive positions. A leader that predates it answers NOT_FOUND (no
// such peer operation), and the records go again as opProduce.

// opProduceRecords passes one partition's records on to its leader.
var opProduceRecords = peer.NewOp[forwardedProduce, producedRuns]("core/produce-records")

// forwardedProduce is opProduceRecords' request: an api.ProduceRequest
// whose records, all of Partition, are the payload.
type forwardedProduce struct {
	Topic     string                `json:"topic"`
	Partition int32                 `json:"partition"`
	Acks      api.Acks              `json:"acks"`
	Timeout   time.Duration         `json:"timeout"`
	Producer  *api.ProducerSequence `json:"producer,omitempty"`
	Count     int                   `json:"count"` // records in the payload
	records   []byte
}

func (f *forwardedProduce) PeerPayload() []byte     { return f.records }
func (f *forwardedProduce) SetPeerPayload(b []byte) { f.records = b }

// producedRuns is opProduceRecords' answer: the positions of the
// request's records in order, as runs.
type producedRuns struct {
	Runs []positionRun `json:"runs"`
}

// positionRun is Count consecutive records with the same outcome: stored
// from Offset on (one offset each), or not stored (Offset -1).
type positionRun struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Count     int    `json:"count"`
	Code      string `json:"code,omitempty"`
	Error     string `json:"error,omitempty"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

// produceAt sends the records of req, all of partition p, to the leader
// whose peer listener is at addr, as forwarded at epoch, and returns each
// record's position.
func produceAt(ctx context.Context, c *peer.Client, addr string, epoch int32, req api.ProduceRequest, p int32) ([]api.RecordPosition, error) {
	f := forwardedProduce{Topic: req.Topic, Partition: p, Acks: req.Acks, Timeout: req.Timeout, Producer: req.Producer,
		Count: len(req.Records), records: encodeForwardedRecords(make([]byte, 0, forwardedSize(req.Records)), req.Records)}
	runs, err := peer.Call(ctx, c, addr, opProduceRecords, f, peer.ForwardedAt(epoch))
	if api.IsCode(err, api.CodeNotFound) {
		// A leader of an earlier version (a rolling upgrade).
		resp, err := peer.Call(ctx, c, addr, opProduce, req, peer.ForwardedAt(epoch))
		return resp.Records, err
	}
	if err != nil {
		return nil, err
	}
	return runs.positions(len(req.Records))
}

// serveProduceRecords is opProduceRecords' handler: the records written
// as they came when this broker leads their partition (appendSection),
// otherwise opProduce's handler with the records decoded from the payload.
func (b *Broker) serveProduceRecords(ctx context.Context, f forwardedProduce) (producedRuns, error) {
	if t := b.leadsForwarded(ctx, f); t != nil {
		return b.appendSection(ctx, t, f)
	}
	records, err := decodeForwardedRecords(f.records, f.Count, f.Partition)
	if err != nil {
		return producedRuns{}, api.Errorf(api.CodeInvalidArgument, "forwarded produce to %s-%d: %v", f.Topic, f.Partition, err)
	}
	out, err := b.serveProduce(ctx, api.ProduceRequest{Topic: f.Topic, Records: records, Acks: f.Acks,
		Timeout: f.Timeout, Producer: f.Producer})
	if err != nil {
		return producedRuns{}, err
	}
	return producedRuns{Runs: runsOf(out.Records)}, nil
}

// leadsForwarded returns f's topic when f is the common case of a
// forwarded produce, which appendSection writes: no idempotent producer,
// and a topic and partition this broker knows and leads once its image
// has caught up with the forwarding broker's. Anything else (an unknown
// topic to auto-create, a leadership that moved on) goes the way of a
// client's produce, which answers it.
func (b *Broker) leadsForwarded(ctx context.Context, f forwardedProduce) *metadata.Topic {
	if f.Producer != nil || f.Count <= 0 || !IsForwarded(ctx) {
		return nil
	}
	b.awaitLeadership(ctx, f.Topic, f.Partition)
	t, err := b.writableTopic(f.Topic)
	if err != nil || f.Partition < 0 || int(f.Partition) >= len(t.Partitions) || int32(t.Partitions[f.Partition].Leader) != b.id {
		return nil
	}
	return t
}

// appendSection writes the records of f to this broker's replica as the
// forwarding broker encoded them (replica.Batch.Section): the log checks
// them and rewrites only their timestamps, where decoding them into
// records and encoding those again was the largest cost a leader paid for
// records passed on to it (docs/benchmarks.md). The answer is what
// opProduce's handler answers for the same records.
func (b *Broker) appendSection(ctx context.Context, t *metadata.Topic, f forwardedProduce) (producedRuns, error) {
	// What it holds besides the request: the batch the log encodes.
	if err := memory.AccountFrom(ctx).Charge(b.memory.Requests, 2*int64(len(f.records))); err != nil {
		return producedRuns{}, err
	}
	if f.Timeout <= 0 {
		f.Timeout = defaultProduceTimeout
	}
	batch := replica.Batch{Section: f.records, Count: f.Count, Options: storage.BatchOptions{Compression: b.compression(f.Topic)}}
	res, err := b.writeLocal(replica.WithTopicID(ctx, t.ID), f.Topic, f.Partition, batch, f.Acks, f.Timeout)
	run := positionRun{Partition: f.Partition, Offset: res.BaseOffset, Count: f.Count}
	if err != nil {
		// Stored with ErrNotEnoughReplicasAfterAppend (committed on
		// fewer replicas than asked for), not stored otherwise.
		if !errors.Is(err, replica.ErrNotEnoughReplicasAfterAppend) {
			run.Offset = -1
		}
		e, ok := AsAPIError(apiError(err))
		if !ok {
			return producedRuns{}, err // a bug: answered INTERNAL
		}
		run.Code, run.Error = e.Code, e.Message
	}
	return producedRuns{Runs: []positionRun{run}}, nil
}

// encodeForwardedRecords appends records to dst as a records section
// (storage.AppendSection): each a Kafka record whose timestamp delta holds
// the record's timestamp (0: the leader's clock) and whose offset delta is
// its index.
func encodeForwardedRecords(dst []byte, records []api.ProduceRecord) []byte {
	for i := range records {
		r := &records[i]
		rec := storage.Record{Timestamp: r.Timestamp, Key: r.Key, Value: r.Value, Headers: storageHeaders(r.Headers)}
		dst = storage.AppendSectionRecord(dst, &rec, i)
	}
	return dst
}

// forwardedSize is about the bytes of records as a records section: a
// buffer of this size seldom grows.
func forwardedSize(records []api.ProduceRecord) int {
	size := 0
	for i := range records {
		r := &records[i]
		size += len(r.Key) + len(r.Value) + 24
		for _, h := range r.Headers {
			size += len(h.Key) + len(h.Value) + 10
		}
	}
	return size
}

// decodeForwardedRecords decodes count records of partition from b. Keys
// and values are slices of b.
func decodeForwardedRecords(b []byte, count int, partition int32) ([]api.ProduceRecord, error) {
	recs, err := storage.DecodeSection(b, count)
	if err != nil {
		return nil, err
	}
	out := make([]api.ProduceRecord, len(recs))
	for i, r := range recs {
		out[i] = api.ProduceRecord{Partition: partition, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp,
			Headers: apiHeaders(r.Headers)}
	}
	return out, nil
}

// runsOf groups positions into runs.
func runsOf(positions []api.RecordPosition) []positionRun {
	var runs []positionRun
	for _, p := range positions {
		if n := len(runs); n > 0 {
			last := &runs[n-1]
			next := int64(-1)
			if last.Offset >= 0 {
				next = last.Offset + int64(last.Count)
			}
			if p.Partition == last.Partition && p.Offset == next && p.Code == last.Code &&
				p.Error == last.Error && p.Duplicate == last.Duplicate {
				last.Count++
				continue
			}
		}
		runs = append(runs, positionRun{Partition: p.Partition, Offset: p.Offset, Count: 1, Code: p.Code,
			Error: p.Error, Duplicate: p.Duplicate})
	}
	return runs
}

// positions expands the runs into want positions, refusing an answer for
// another number of records.
func (r producedRuns) positions(want int) ([]api.RecordPosition, error) {
	total := 0
	for _, run := range r.Runs {
		if run.Count < 1 || run.Offset < -1 {
			return nil, api.Errorf(api.CodeInternal, "leader answered a run of %d records at offset %d", run.Count, run.Offset)
		}
		total += run.Count
		if total > want {
			break
		}
	}
	if total != want {
		return nil, api.Errorf(api.CodeInternal, "leader answered %d positions for %d records", total, want)
	}
	out := make([]api.RecordPosition, 0, want)
	for _, run := range r.Runs {
		for i := range run.Count {
			offset := int64(-1)
			if run.Offset >= 0 {
				offset = run.Offset + int64(i)
			}
			out = append(out, api.RecordPosition{Partition: run.Partition, Offset: offset, Code: run.Code,
				Error: run.Error, Duplicate: run.Duplicate})
		}
	}
	return out, nil
}
