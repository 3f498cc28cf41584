package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
)

// TestProducePrintsWhichRecordsAreStored: when one partition of a batch
// fails (its batch is over max.message.bytes) and another is written,
// kairoctl prints where each stored record is and which were not stored,
// and still exits with the error, so a script neither loses the failure
// nor sends the stored records again.
func TestProducePrintsWhichRecordsAreStored(t *testing.T) {
	url := startBroker(t)
	mustRun(t, url, "", "topics", "create", "mixed", "-p", "2", "-c", "max.message.bytes=1024")
	// Keys that Kafka's partitioner puts in partition 0 and partition 1.
	keys := map[int32]string{}
	for i := 0; len(keys) < 2; i++ {
		k := fmt.Sprintf("key-%d", i)
		if p := api.KeyPartition([]byte(k), 2); keys[p] == "" {
			keys[p] = k
		}
	}
	big := strings.Repeat("x", 2000)
	out, err := run(t, url, "", "produce", "mixed", "--key-separator", ":", keys[0]+":small", keys[1]+":"+big)
	if !client.IsCode(err, client.CodeRecordTooLarge) {
		t.Fatalf("produce: %v\n%s", err, out)
	}
	want := "mixed partition 0 offset 0\nmixed partition 1 not stored: RECORD_TOO_LARGE: "
	if !strings.HasPrefix(out, want) {
		t.Fatalf("produce printed %q, want it to start with %q", out, want)
	}
}
