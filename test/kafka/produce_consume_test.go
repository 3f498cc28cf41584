package kafka

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
)

// TestProduceConsumeRoundTrip: a kgo producer (idempotent, acks=all,
// compressed batches of every codec) writes to a three-partition topic at
// RF 3 on three brokers, and a kgo consumer reads every record back, in
// order per partition, with its key, value and headers; the HTTP API reads
// the same records at the same offsets. Through the Kafka listeners and
// through one broker's gateway.
func TestProduceConsumeRoundTrip(t *testing.T) {
	c := startCluster(t, 3, nil)
	codecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	listeners := map[string][]string{"kafka": c.KafkaAddresses(), "gateway": {c.GatewayAddress(1)}}
	for lname, seeds := range listeners {
		for cname, codec := range codecs {
			t.Run(lname+"/"+cname, func(t *testing.T) {
				topic := "orders-" + lname + "-" + cname
				if _, err := c.Client(0).CreateTopic(testContext(t, 30*time.Second),
					api.CreateTopicRequest{Name: topic, Partitions: 3, ReplicationFactor: 3}); err != nil {
					t.Fatal(err)
				}
				const n = 300
				prod := newClient(t, seeds, kgo.ProducerBatchCompression(codec), kgo.RequiredAcks(kgo.AllISRAcks()),
					kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5*time.Millisecond))
				ctx := testContext(t, 60*time.Second)
				var sent []*kgo.Record
				for i := 0; i < n; i++ {
					r := &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i%17)), Value: []byte(fmt.Sprintf("value-%d", i)),
						Headers: []kgo.RecordHeader{{Key: "i", Value: []byte(fmt.Sprint(i))}}}
					sent = append(sent, r)
					prod.Produce(ctx, r, func(r *kgo.Record, err error) {
						if err != nil {
							t.Errorf("produce %s: %v", r.Value, err)
						}
					})
				}
				if err := prod.Flush(ctx); err != nil {
					t.Fatal(err)
				}
				if t.Failed() {
					t.FailNow()
				}

				cons := newClient(t, seeds, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
				got := map[string]*kgo.Record{}
				next := map[int32]int64{}
				for len(got) < n {
					fs := cons.PollFetches(ctx)
					if ctx.Err() != nil {
						t.Fatalf("consumed %d of %d records: %v", len(got), n, ctx.Err())
					}
					fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
					fs.EachRecord(func(r *kgo.Record) {
						if r.Offset != next[r.Partition] {
							t.Fatalf("partition %d: offset %d after %d", r.Partition, r.Offset, next[r.Partition]-1)
						}
						next[r.Partition]++
						got[string(r.Value)] = r
					})
				}
				for _, s := range sent {
					r := got[string(s.Value)]
					if r == nil {
						t.Fatalf("%s not consumed", s.Value)
					}
					if string(r.Key) != string(s.Key) || r.Partition != s.Partition || r.Offset != s.Offset ||
						len(r.Headers) != 1 || string(r.Headers[0].Value) != string(s.Headers[0].Value) {
						t.Fatalf("sent %s key %s at %d/%d, consumed key %s at %d/%d headers %v",
							s.Value, s.Key, s.Partition, s.Offset, r.Key, r.Partition, r.Offset, r.Headers)
					}
				}
				// The HTTP API reads the same records at the same offsets.
				last := sent[n-1]
				hf, err := c.Client(2).Fetch(ctx, client.FetchRequest{Topic: topic, Partition: last.Partition, Offset: last.Offset, MaxRecords: 1})
				if err != nil {
					t.Fatal(err)
				}
				if len(hf.Records) != 1 || hf.Records[0].Message != string(last.Value) || hf.Records[0].Offset != last.Offset {
					t.Fatalf("HTTP fetch of %d/%d: %+v, want %s", last.Partition, last.Offset, hf.Records, last.Value)
				}
			})
		}
	}
}

// TestFetchFromInsideABatch: a consumer that starts at an offset inside a
// stored batch gets the records from that offset on (the client drops
// the batch's earlier ones).
func TestFetchFromInsideABatch(t *testing.T) {
	c := startCluster(t, 1, nil)
	ctx := testContext(t, 60*time.Second)
	topic := "inside"
	if _, err := c.Client(0).CreateTopic(ctx, api.CreateTopicRequest{Name: topic, Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	prod := newClient(t, c.KafkaAddresses(), kgo.DefaultProduceTopic(topic))
	var records []*kgo.Record
	for i := 0; i < 10; i++ {
		records = append(records, &kgo.Record{Value: []byte(fmt.Sprint(i))})
	}
	// One ProduceSync call of ten records is one batch.
	if err := prod.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cons := newClient(t, c.KafkaAddresses(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {0: kgo.NewOffset().At(6)}}))
	var got []string
	for len(got) < 4 {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %v: %v", got, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, fmt.Sprintf("%d=%s", r.Offset, r.Value)) })
	}
	if want := "[6=6 7=7 8=8 9=9]"; fmt.Sprint(got) != want {
		t.Fatalf("consumed %v, want %s", got, want)
	}
}
