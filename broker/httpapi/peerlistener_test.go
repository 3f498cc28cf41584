package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/peer"
)

// TestPeerListenerNeedsTheClusterSecret: the broker-to-broker operations
// are served on the peer listener only, and only to a caller holding the
// cluster secret. Without it, or with another, a controller operation
// that would delete a topic, a replica fetch and a proxied produce are
// 401 UNAUTHENTICATED and change nothing; with it they run.
func TestPeerListenerNeedsTheClusterSecret(t *testing.T) {
	n := startSingle(t, nodeOptions{})
	n.expect(t, "POST", "/topics", `{"name":"orders"}`, 201)
	n.expect(t, "POST", "/produce", `{"topic":"orders","partition":0,"message":"kept"}`, 200)
	base := "http://" + n.cfg.PeerAdvertise

	calls := []struct{ path, body string }{
		{"/internal/controller/delete-topic", `{"name":"orders"}`},
		{"/internal/replica/fetch-session", `{"replica_id":0,"wait_ms":0,"partitions":[{"topic":"orders","partition":0,"leader_epoch":0,"fetch_offset":0,"last_fetched_epoch":-1,"max_bytes":1024}]}`},
		{"/internal/core/produce", `{"topic":"orders","records":[{"partition":0,"value":"aW5qZWN0ZWQ="}],"acks":1}`},
	}
	for _, auth := range []string{"", "Bearer not-the-cluster-secret", "Bearer " + peer.GenerateSecret().Reveal(), testSecret.Reveal()} {
		for _, c := range calls {
			req, _ := http.NewRequest(http.MethodPost, base+c.path, strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := httpClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body api.ErrorBody
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusUnauthorized || body.Code != "UNAUTHENTICATED" {
				t.Errorf("%s with Authorization %q: %d %+v %v", c.path, auth, resp.StatusCode, body, err)
			}
		}
	}
	r := n.expect(t, "GET", "/fetch?topic=orders&partition=0", "", 200)
	if recs := r["records"].([]any); len(recs) != 1 {
		t.Fatalf("refused peer calls changed the log: %v", r)
	}

	// The same calls with the secret reach the broker: the fetch is
	// answered by the replica layer (broker 0 does not follow itself: the
	// partition's answer in the reply is NOT_REPLICA), the produce stored,
	// the topic deleted.
	peers := peer.NewClient(testSecret).HTTPClient()
	for i, want := range []struct {
		status int
		answer string
	}{{http.StatusOK, `"code":"NOT_REPLICA"`}, {http.StatusOK, `"offset":1`}, {http.StatusOK, `"result"`}} {
		c := calls[(i+1)%len(calls)]
		resp, err := peers.Post(base+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want.status || !strings.Contains(string(body), want.answer) {
			t.Errorf("%s with the secret: %d %s, want %d and %s", c.path, resp.StatusCode, body, want.status, want.answer)
		}
		if c.path == "/internal/core/produce" {
			r := n.expect(t, "GET", "/fetch?topic=orders&partition=0", "", 200)
			if recs := r["records"].([]any); len(recs) != 2 {
				t.Fatalf("proxied produce: %v", r)
			}
		}
	}
	n.expect(t, "GET", "/topics/orders", "", http.StatusNotFound)
}
