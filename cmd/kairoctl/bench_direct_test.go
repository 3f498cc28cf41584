package main

import (
	"context"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
)

// bench --direct puts keyed records where the broker's partitioner would
// and loses none, for single and batched requests.
func TestBenchDirectRoutesLikeTheBroker(t *testing.T) {
	url := startBroker(t)
	mustRun(t, url, "", "bench", "--topic", "direct", "--partitions", "4", "--config", "retention.ms=3600000",
		"--records", "40", "--batch", "8", "--keyed", "--direct", "--mode", "produce")
	mustRun(t, url, "", "bench", "--topic", "direct", "--records", "10", "--keyed", "--direct", "--mode", "produce")
	c, _ := client.New(url)
	d, err := c.DescribeTopic(context.Background(), "direct")
	if err != nil {
		t.Fatal(err)
	}
	if d.Config["retention.ms"] != "3600000" {
		t.Errorf("--config not applied: %v", d.Config)
	}
	total := 0
	for p := int32(0); p < 4; p++ {
		f, err := c.Fetch(context.Background(), client.FetchRequest{Topic: "direct", Partition: p, MaxRecords: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range f.Records {
			if r.Key == nil || api.KeyPartition([]byte(*r.Key), 4) != p {
				t.Errorf("record with key %v in partition %d", r.Key, p)
			}
		}
		total += len(f.Records)
	}
	if total != 50 {
		t.Fatalf("%d records stored, want 50", total)
	}
}
