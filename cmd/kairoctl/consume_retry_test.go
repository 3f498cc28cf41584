package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// A consumer outlasts a leader or coordinator move: the 503s a broker
// answers meanwhile are retried, not fatal.
func TestConsumeRetriesWhileLeadershipMoves(t *testing.T) {
	brokerURL := startBroker(t)
	mustRun(t, brokerURL, "", "topics", "create", "orders", "--partitions", "1")
	mustRun(t, brokerURL, "a\nb\nc\n", "produce", "orders", "--acks", "all")

	target, _ := url.Parse(brokerURL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var joins, fetches atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		unavailable := func(code string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"moving","code":"` + code + `","retry_after_ms":10}`))
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/join") && joins.Add(1) == 1:
			unavailable("COORDINATOR_NOT_AVAILABLE")
		case r.URL.Path == "/fetch" && fetches.Add(1) <= 3:
			unavailable("LEADER_NOT_AVAILABLE")
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	defer flaky.Close()

	out := mustRun(t, flaky.URL, "", "consume", "orders", "--group", "g", "--from-beginning", "--max", "3")
	if out != "a\nb\nc\n" {
		t.Fatalf("consumed %q, want a, b and c", out)
	}
	if joins.Load() < 2 || fetches.Load() < 4 {
		t.Fatalf("the failures were not hit: %d joins, %d fetches", joins.Load(), fetches.Load())
	}
}
