package main

import (
	"context"
	"strings"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
)

// bench produces as idempotent producers by default: keyed records land
// where the broker's partitioner puts them, every record once, single
// and batched; --idempotent=false runs plain produces.
func TestBenchProducesIdempotently(t *testing.T) {
	url := startBroker(t)
	out := mustRun(t, url, "", "bench", "--topic", "idem", "--partitions", "3", "--records", "60", "--batch", "7",
		"--concurrency", "3", "--keyed", "--mode", "produce")
	if !strings.Contains(out, "idempotent") {
		t.Fatalf("bench did not produce idempotently:\n%s", out)
	}
	out = mustRun(t, url, "", "bench", "--topic", "idem", "--records", "20", "--concurrency", "2", "--mode", "produce")
	if !strings.Contains(out, "idempotent") {
		t.Fatalf("bench of single records did not produce idempotently:\n%s", out)
	}
	out = mustRun(t, url, "", "bench", "--topic", "idem", "--records", "10", "--idempotent=false", "--mode", "produce")
	if strings.Contains(out, "idempotent") {
		t.Fatalf("--idempotent=false produced idempotently:\n%s", out)
	}
	c, _ := client.New(url)
	total := 0
	for p := int32(0); p < 3; p++ {
		f, err := c.Fetch(context.Background(), client.FetchRequest{Topic: "idem", Partition: p, MaxRecords: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range f.Records {
			if r.Key != nil && api.KeyPartition([]byte(*r.Key), 3) != p {
				t.Errorf("record with key %v in partition %d", *r.Key, p)
			}
		}
		total += len(f.Records)
	}
	if total != 90 {
		t.Fatalf("%d records stored, want 90", total)
	}
}
