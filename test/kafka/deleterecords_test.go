package kafka

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
)

// TestDeleteRecords: kadm's DeleteRecords moves the log start of one
// partition to an offset and of another to its high watermark; kadm's
// ListStartOffsets, a kgo consumer reading from the start, and the HTTP
// API through every broker then all begin there. An offset above the high
// watermark is OFFSET_OUT_OF_RANGE; the HTTP API's delete-records moves
// what kadm then sees.
func TestDeleteRecords(t *testing.T) {
	c := startCluster(t, 3, nil)
	ctx := testContext(t, 90*time.Second)
	if _, err := c.Client(0).CreateTopic(ctx, api.CreateTopicRequest{Name: "events", Partitions: 2, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	seeds := c.KafkaAddresses()
	producer := newClient(t, seeds, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range int32(2) {
		for i := range 10 {
			r := &kgo.Record{Topic: "events", Partition: p, Value: fmt.Appendf(nil, "p%d-%d", p, i)}
			if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	adm := kadm.NewClient(newClient(t, seeds))
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "events", Partition: 0, At: 4})
	del.Add(kadm.Offset{Topic: "events", Partition: 1, At: -1})
	res, err := adm.DeleteRecords(ctx, del)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[int32]int64{0: 4, 1: 10} {
		r, ok := res.Lookup("events", p)
		if !ok || r.Err != nil || r.LowWatermark != want {
			t.Fatalf("DeleteRecords of events-%d: %+v, want low watermark %d", p, r, want)
		}
	}
	above := kadm.Offsets{}
	above.Add(kadm.Offset{Topic: "events", Partition: 0, At: 50})
	if res, err = adm.DeleteRecords(ctx, above); err != nil {
		t.Fatal(err)
	}
	if r, _ := res.Lookup("events", 0); !errors.Is(r.Err, kerr.OffsetOutOfRange) {
		t.Fatalf("DeleteRecords above the high watermark: %+v, want OFFSET_OUT_OF_RANGE", r)
	}

	startsAre := func(want0, want1 int64) {
		t.Helper()
		starts, err := adm.ListStartOffsets(ctx, "events")
		if err != nil {
			t.Fatal(err)
		}
		for p, want := range map[int32]int64{0: want0, 1: want1} {
			if o, ok := starts.Lookup("events", p); !ok || o.Err != nil || o.Offset != want {
				t.Fatalf("kadm's start offset of events-%d: %+v, want %d", p, o, want)
			}
		}
		for i := range 3 {
			d, err := c.Client(i).DescribeTopic(ctx, "events")
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range d.Partitions {
				if want := map[int32]int64{0: want0, 1: want1}[p.Partition]; p.LogStartOffset != want {
					t.Fatalf("events-%d's log start through broker %d's HTTP API: %d, want %d", p.Partition, i, p.LogStartOffset, want)
				}
			}
		}
	}
	startsAre(4, 10)
	consumer := newClient(t, seeds, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		"events": {0: kgo.NewOffset().AtStart()}}))
	fetches := consumer.PollRecords(ctx, 1)
	if err := fetches.Err(); err != nil {
		t.Fatal(err)
	}
	if recs := fetches.Records(); len(recs) == 0 || recs[0].Offset != 4 || string(recs[0].Value) != "p0-4" {
		t.Fatalf("a consumer from the start of events-0 first reads %v, want p0-4 at offset 4", recs)
	}

	// The HTTP API deletes more of events-0 through broker 2.
	out, err := c.Client(2).DeleteRecords(ctx, "events", []api.PartitionRecordsDeletion{{Partition: 0, Offset: 6}})
	if err != nil || len(out) != 1 || out[0].LowWatermark == nil || *out[0].LowWatermark != 6 {
		t.Fatalf("HTTP delete-records: %+v, %v", out, err)
	}
	startsAre(6, 10)
	var ae *api.Error
	if _, err := c.Client(1).Fetch(ctx, client.FetchRequest{Topic: "events", Partition: 0, Offset: 5}); !errors.As(err, &ae) || ae.Code != api.CodeOffsetOutOfRange {
		t.Fatalf("HTTP fetch below the log start: %v, want OFFSET_OUT_OF_RANGE", err)
	}
}
