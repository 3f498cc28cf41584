package core_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/internal/brokertest"
)

// TestForwardedRecordsStoredAsTheLeadersOwn: records a broker passes on to
// their partition's leader are stored as the leader stores those of its
// own clients: nil and empty keys, values and header values told apart,
// given timestamps kept and missing ones the leader's clock, one batch
// per produce compressed as the topic says.
func TestForwardedRecordsStoredAsTheLeadersOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-broker cluster")
	}
	bs := brokertest.StartInProcess(t, brokertest.InProcessOptions{Brokers: 3})
	ctx := context.Background()
	records := []api.ProduceRecord{
		{Value: []byte("no key")},
		{Key: []byte{}, Value: []byte{}},
		{Key: []byte("k"), Value: nil},
		{Key: []byte("ts"), Value: []byte("given"), Timestamp: 1_700_000_000_123},
		{Key: []byte("old"), Value: []byte("negative"), Timestamp: -1},
		{Value: bytes.Repeat([]byte("v"), 3000), Headers: []api.Header{{Key: "trace", Value: []byte("abc")}, {Key: "", Value: nil}, {Key: "empty", Value: []byte{}}}},
	}
	n := int64(len(records))
	for _, tc := range []struct {
		topic string
		codec int16
	}{{"plain", 0}, {"zipped", 3}} {
		spec := api.CreateTopicRequest{Name: tc.topic, Partitions: 1, ReplicationFactor: 3}
		if tc.codec != 0 {
			spec.Config = map[string]string{"compression.type": "lz4"}
		}
		if _, err := bs[0].Core.CreateTopic(ctx, spec); err != nil {
			t.Fatal(err)
		}
		leader := leaderOf(t, bs, tc.topic)
		other := bs[(leader+1)%3]

		before := time.Now().UnixMilli()
		for i, via := range []*brokertest.InProcessBroker{bs[leader], other} {
			positions, err := via.Core.Produce(ctx, api.ProduceRequest{Topic: tc.topic, Records: records, Acks: api.AcksAll})
			if err != nil {
				t.Fatalf("%s: produce through broker %d: %v", tc.topic, via.ID, err)
			}
			for j, p := range positions {
				if p.Offset != int64(i)*n+int64(j) {
					t.Fatalf("%s: record %d through broker %d at offset %d, want %d", tc.topic, j, via.ID, p.Offset, int64(i)*n+int64(j))
				}
			}
		}
		after := time.Now().UnixMilli()

		res, err := bs[leader].Core.Fetch(ctx, api.FetchRequest{Topic: tc.topic, Offset: 0, MaxRecords: int(2 * n), MaxBytes: 1 << 20})
		if err != nil || int64(len(res.Records)) != 2*n {
			t.Fatalf("%s: fetched %v, %v; want %d records", tc.topic, res, err, 2*n)
		}
		for j, want := range records {
			own, passed := res.Records[j], res.Records[n+int64(j)]
			if !reflect.DeepEqual(passed.Key, want.Key) || !reflect.DeepEqual(passed.Value, want.Value) ||
				!reflect.DeepEqual(passed.Headers, want.Headers) || !reflect.DeepEqual(passed.Headers, own.Headers) {
				t.Errorf("%s: record %d passed on reads back as key %q value %.20q headers %+v; produced key %q value %.20q headers %+v",
					tc.topic, j, passed.Key, passed.Value, passed.Headers, want.Key, want.Value, want.Headers)
			}
			if want.Timestamp != 0 && passed.Timestamp != want.Timestamp {
				t.Errorf("%s: record %d passed on has timestamp %d, produced with %d", tc.topic, j, passed.Timestamp, want.Timestamp)
			}
			if want.Timestamp == 0 && (passed.Timestamp < before || passed.Timestamp > after) {
				t.Errorf("%s: record %d passed on without a timestamp got %d, not the leader's clock (%d..%d)", tc.topic, j, passed.Timestamp, before, after)
			}
		}

		// Two batches on the leader's disk, each with the topic's codec.
		batches := storedBatches(t, bs[leader].DataDir, tc.topic+"-0")
		if len(batches) != 2 {
			t.Fatalf("%s: %d batches on disk, want 2", tc.topic, len(batches))
		}
		for i, b := range batches {
			if b.Attributes&7 != tc.codec || int64(b.NumRecords) != n || b.FirstOffset != int64(i)*n {
				t.Errorf("%s: batch %d at offset %d: codec %d, %d records; want codec %d, %d records",
					tc.topic, i, b.FirstOffset, b.Attributes&7, b.NumRecords, tc.codec, n)
			}
		}
	}
}

// leaderOf waits until every broker shows topic's partition 0 with the
// same leader, and returns it.
func leaderOf(t *testing.T, bs []*brokertest.InProcessBroker, topic string) int32 {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		leader := int32(-1)
		agreed := true
		for _, b := range bs {
			d, err := b.Core.DescribeTopic(context.Background(), topic)
			if err != nil || len(d.Partitions) != 1 || d.Partitions[0].Leader < 0 || (leader >= 0 && d.Partitions[0].Leader != leader) {
				agreed = false
				break
			}
			leader = d.Partitions[0].Leader
		}
		if agreed {
			return leader
		}
		if time.Now().After(deadline) {
			t.Fatalf("brokers do not agree on a leader of %s", topic)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// storedBatches reads the batches of a partition's segments.
func storedBatches(t *testing.T, dataDir, partition string) []kmsg.RecordBatch {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dataDir, partition, "*.log"))
	sort.Strings(segs)
	var data []byte
	for _, s := range segs {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, b...)
	}
	var out []kmsg.RecordBatch
	for len(data) >= 12 {
		var b kmsg.RecordBatch
		if err := b.ReadFrom(data); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
		data = data[binary.BigEndian.Uint32(data[8:])+12:]
	}
	return out
}
