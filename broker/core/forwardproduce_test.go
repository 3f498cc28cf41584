package core

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/peer"
)

// TestForwardedRecordsRoundTrip: what a leader decodes from a forwarded
// produce is exactly what the forwarding broker had, nil and empty keys,
// values and header values told apart.
func TestForwardedRecordsRoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	tests := []struct {
		name    string
		records []api.ProduceRecord
	}{
		{"none", []api.ProduceRecord{}},
		{"value only", []api.ProduceRecord{{Value: []byte("hello")}}},
		{"nil and empty", []api.ProduceRecord{{}, {Key: []byte{}, Value: []byte{}}, {Key: []byte("k")}}},
		{"every byte", []api.ProduceRecord{{Key: all, Value: all}}},
		{"timestamps", []api.ProduceRecord{{Value: []byte("a"), Timestamp: 1_700_000_000_123}, {Value: []byte("b"), Timestamp: -1}}},
		{"headers", []api.ProduceRecord{{Value: []byte("v"), Headers: []api.Header{
			{Key: "trace", Value: []byte("abc")}, {Key: "", Value: nil}, {Key: "empty", Value: []byte{}}}}}},
		{"large", []api.ProduceRecord{{Value: []byte(strings.Repeat("x", 1<<20))}, {Value: []byte("y")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := make([]api.ProduceRecord, len(tt.records))
			for i, r := range tt.records {
				r.Partition = 5
				want[i] = r
			}
			got, err := decodeForwardedRecords(encodeForwardedRecords(nil, tt.records), len(tt.records), 5)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("decoded %+v, want %+v", got, want)
			}
		})
	}
}

// TestForwardedRecordsRefuseMalformed: a payload that is cut short, has
// more or fewer records than announced, or bytes after its last record is
// refused, never read past.
func TestForwardedRecordsRefuseMalformed(t *testing.T) {
	two := encodeForwardedRecords(nil, []api.ProduceRecord{{Value: []byte("one")}, {Key: []byte("k"), Value: []byte("two")}})
	tests := []struct {
		name    string
		payload []byte
		count   int
	}{
		{"cut short", two[:len(two)-1], 2},
		{"cut in the length", two[:0:0], 1},
		{"fewer than announced", two, 3},
		{"more than announced", two, 1},
		{"bytes after", append(append([]byte{}, two...), 0x02, 0x00), 2},
		{"negative length", append([]byte{0x01}, two...), 2},
		{"negative count", two, -1},
		{"count beyond the bytes", two, 1 << 30},
		{"a value longer than its record", []byte{0x0c, 0, 0, 0, 1, 0x7e, 'a', 0, 0, 0, 0, 0, 0}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := decodeForwardedRecords(tt.payload, tt.count, 0); err == nil {
				t.Fatalf("decoded %+v, want an error", got)
			}
		})
	}
}

// FuzzDecodeForwardedRecords: a forwarded produce's payload is decoded
// with an error or into records that encode back to the same bytes' worth
// of records, never a panic.
func FuzzDecodeForwardedRecords(f *testing.F) {
	f.Add(encodeForwardedRecords(nil, []api.ProduceRecord{{Value: []byte("v")}, {Key: []byte("k"), Headers: []api.Header{{Key: "h"}}}}), 2)
	f.Add([]byte{}, 0)
	f.Add([]byte{0x0e, 0, 0, 0, 1, 0, 0}, 1)
	f.Fuzz(func(t *testing.T, payload []byte, count int) {
		got, err := decodeForwardedRecords(payload, count, 1)
		if err != nil {
			return
		}
		again, err := decodeForwardedRecords(encodeForwardedRecords(nil, got), len(got), 1)
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("decoded %+v, then %+v, %v", got, again, err)
		}
	})
}

// TestPositionRuns: positions survive the runs they travel in, whatever
// their mix of stored, failed and duplicate records.
func TestPositionRuns(t *testing.T) {
	tests := []struct {
		name      string
		positions []api.RecordPosition
		runs      int
	}{
		{"stored", []api.RecordPosition{{Partition: 2, Offset: 10}, {Partition: 2, Offset: 11}, {Partition: 2, Offset: 12}}, 1},
		{"failed", []api.RecordPosition{{Partition: 2, Offset: -1, Code: api.CodeNotEnoughReplicas, Error: "isr 1"},
			{Partition: 2, Offset: -1, Code: api.CodeNotEnoughReplicas, Error: "isr 1"}}, 1},
		{"after append", []api.RecordPosition{{Partition: 0, Offset: 0, Code: api.CodeNotEnoughReplicasAfterAppend, Error: "x"},
			{Partition: 0, Offset: 1, Code: api.CodeNotEnoughReplicasAfterAppend, Error: "x"}}, 1},
		{"duplicate then new", []api.RecordPosition{{Partition: 1, Offset: 4, Duplicate: true}, {Partition: 1, Offset: 5}}, 2},
		{"a gap", []api.RecordPosition{{Partition: 1, Offset: 4}, {Partition: 1, Offset: 6}}, 2},
		{"partitions", []api.RecordPosition{{Partition: 1, Offset: 4}, {Partition: 2, Offset: 5}}, 2},
		{"none", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := runsOf(tt.positions)
			if len(runs) != tt.runs {
				t.Errorf("%d runs, want %d: %+v", len(runs), tt.runs, runs)
			}
			got, err := producedRuns{Runs: runs}.positions(len(tt.positions))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.positions) || (len(got) > 0 && !reflect.DeepEqual(got, tt.positions)) {
				t.Fatalf("positions %+v, want %+v", got, tt.positions)
			}
			if _, err := (producedRuns{Runs: runs}).positions(len(tt.positions) + 1); !api.IsCode(err, api.CodeInternal) {
				t.Fatalf("runs for %d records taken for %d: %v", len(tt.positions), len(tt.positions)+1, err)
			}
		})
	}
}

// TestProduceAtEarlierLeader: a leader that serves opProduceRecords gets
// the records that way; one that predates it (a rolling upgrade) answers
// NOT_FOUND, and gets them as opProduce, with the same positions either
// way.
func TestProduceAtEarlierLeader(t *testing.T) {
	secret, err := peer.NewSecret("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	// The leader stores the records from offset 100 and answers where.
	store := func(_ context.Context, req api.ProduceRequest) (producedPositions, error) {
		out := producedPositions{}
		for i, r := range req.Records {
			if string(r.Value) != strings.Repeat("v", i) || r.Partition != 3 {
				return out, api.Errorf(api.CodeInvalidArgument, "record %d is %+v", i, r)
			}
			out.Records = append(out.Records, api.RecordPosition{Partition: r.Partition, Offset: 100 + int64(i)})
		}
		return out, nil
	}
	req := api.ProduceRequest{Topic: "t", Acks: api.AcksAll, Timeout: time.Second}
	for i := range 5 {
		req.Records = append(req.Records, api.ProduceRecord{Partition: 3, Value: []byte(strings.Repeat("v", i))})
	}
	for _, current := range []bool{true, false} {
		m := peer.NewMux(secret, slog.New(slog.NewTextHandler(io.Discard, nil)))
		peer.Handle(m, opProduce, store)
		if current {
			peer.Handle(m, opProduceRecords, func(ctx context.Context, f forwardedProduce) (producedRuns, error) {
				records, err := decodeForwardedRecords(f.records, f.Count, f.Partition)
				if err != nil {
					return producedRuns{}, api.Errorf(api.CodeInvalidArgument, "%v", err)
				}
				out, err := store(ctx, api.ProduceRequest{Topic: f.Topic, Records: records})
				return producedRuns{Runs: runsOf(out.Records)}, err
			})
		}
		srv := httptest.NewServer(m)
		c := peer.NewClient(secret)
		got, err := produceAt(context.Background(), c, srv.URL, 7, req, 3)
		c.Close()
		srv.Close()
		if err != nil {
			t.Fatalf("current leader %v: %v", current, err)
		}
		for i, p := range got {
			if p.Partition != 3 || p.Offset != 100+int64(i) || p.Code != "" {
				t.Fatalf("current leader %v: position %d is %+v", current, i, p)
			}
		}
		served := m.Served()
		if current && (served[opProduceRecords.Name()] != 1 || served[opProduce.Name()] != 0) {
			t.Fatalf("current leader served %v", served)
		}
		if !current && served[opProduce.Name()] != 1 {
			t.Fatalf("earlier leader served %v", served)
		}
	}
}
