package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
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
	if !api.IsCode(err, api.CodeRecordTooLarge) {
		t.Fatalf("produce: %v\n%s", err, out)
	}
	want := "mixed partition 0 offset 0\nmixed partition 1 not stored: RECORD_TOO_LARGE: "
	if !strings.HasPrefix(out, want) {
		t.Fatalf("produce printed %q, want it to start with %q", out, want)
	}
}

// TestProduceRetriesWithTheSameSequence: the reply of kairoctl's first
// produce is lost after the broker stored it (a proxy answers 504 in its
// place). kairoctl sends it again with the same producer id and sequence,
// the broker answers with the first send's offset, and the partition holds
// the record once. With --idempotent=false the same loss is an error.
func TestProduceRetriesWithTheSameSequence(t *testing.T) {
	brokerURL := startBroker(t)
	mustRun(t, brokerURL, "", "topics", "create", "orders", "-p", "1")
	target, err := url.Parse(brokerURL)
	if err != nil {
		t.Fatal(err)
	}
	var produces atomic.Int64
	rp := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/produce" || produces.Add(1) != 1 {
			rp.ServeHTTP(w, r)
			return
		}
		rp.ServeHTTP(httptest.NewRecorder(), r) // stored; the reply is lost
		w.WriteHeader(http.StatusGatewayTimeout)
	}))
	defer proxy.Close()

	out := mustRun(t, proxy.URL, "", "produce", "orders", "--acks", "all", "once")
	if out != "orders partition 0 offset 0\n" {
		t.Fatalf("produce printed %q", out)
	}
	if n := produces.Load(); n != 2 {
		t.Fatalf("%d produce requests, want the lost one and its retry", n)
	}
	fetched := mustRun(t, brokerURL, "", "fetch", "orders", "--partition", "0", "--offset", "0")
	// The table's header and one record.
	if strings.Count(fetched, "once") != 1 || strings.Count(fetched, "\n") != 2 {
		t.Fatalf("the partition holds %q, want the record once", fetched)
	}

	produces.Store(0)
	if out, err := run(t, proxy.URL, "", "produce", "orders", "--idempotent=false", "plain"); err == nil {
		t.Fatalf("a plain produce whose reply was lost succeeded: %q", out)
	}
}
