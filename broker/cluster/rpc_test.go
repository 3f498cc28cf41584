package cluster

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/peer"
)

func TestInternalHTTPPaths(t *testing.T) {
	c := newTestCluster(t, 3)
	c.startAll()
	ctl := c.controller()
	var follower *Node
	for _, n := range c.running() {
		if n != ctl {
			follower = n
		}
	}
	base := "http://" + c.broker(follower.ID()).cfg.PeerAdvertise + peer.PathPrefix + opPrefix
	client := peer.NewClient(testSecret).HTTPClient()
	type reply struct {
		Index  uint64          `json:"index"`
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
		Code   string          `json:"code"`
	}
	post := func(path, body string, forwarded bool) (int, reply) {
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		if forwarded {
			req.Header.Set(peer.HeaderForwarded, "1")
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var env reply
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatalf("%s: %q is not JSON", path, b)
		}
		return res.StatusCode, env
	}
	// A follower proxies to the controller.
	status, env := post("create-topic", `{"name":"t","partitions":2,"replication_factor":2}`, false)
	if status != http.StatusOK || env.Index == 0 || !strings.Contains(string(env.Result), `"name":"t"`) {
		t.Fatalf("create through a follower: %d %+v", status, env)
	}
	// A request already forwarded once is not forwarded again.
	if status, env = post("delete-topic", `{"name":"t"}`, true); status != http.StatusServiceUnavailable || env.Code != "NOT_CONTROLLER" {
		t.Fatalf("forwarded twice: %d %+v", status, env)
	}
	if status, env = post("create-topic", `{"name":"t","partitions":2,"replication_factor":2}`, false); status != http.StatusConflict || env.Code != "TOPIC_ALREADY_EXISTS" {
		t.Fatalf("duplicate: %d %+v", status, env)
	}
	if status, env = post("create-topic", `{"name":`, false); status != http.StatusBadRequest || env.Code != "INVALID_JSON" {
		t.Fatalf("bad JSON: %d %+v", status, env)
	}
	if status, env = post("nope", `{}`, false); status != http.StatusNotFound || env.Code != "NOT_FOUND" {
		t.Fatalf("unknown path: %d %+v", status, env)
	}
	res, err := client.Get(base + "heartbeat")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", res.StatusCode)
	}
	// A heartbeat from an old incarnation is refused, so that broker re-registers.
	if status, env = post("heartbeat", `{"id":0,"epoch":1}`, false); env.Code != "STALE_BROKER_EPOCH" {
		t.Fatalf("stale heartbeat: %d %+v", status, env)
	}
	if status, env = post("heartbeat", `{"id":42,"epoch":1}`, false); status != http.StatusNotFound || env.Code != "UNKNOWN_BROKER" {
		t.Fatalf("unknown broker heartbeat: %d %+v", status, env)
	}
	// An internal topic refuses deletion, new partitions and config
	// changes on the controller's own path too.
	if _, err := follower.EnsureOffsetsTopic(ctxTimeout(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ op, body string }{
		{"delete-topic", `{"name":"__consumer_offsets"}`},
		{"create-partitions", `{"topic":"__consumer_offsets","partitions":100}`},
		{"alter-config", `{"topic":"__consumer_offsets","set":{"retention.ms":"1"}}`},
		{"alter-config", `{"topic":"__consumer_offsets","replace":true}`},
	} {
		if status, env = post(c.op, c.body, false); status != http.StatusForbidden || env.Code != "INTERNAL_TOPIC" {
			t.Fatalf("%s %s: %d %+v", c.op, c.body, status, env)
		}
	}
	if ot := follower.Image().Topic(OffsetsTopic); ot == nil || ot.Config["retention.ms"] == "1" {
		t.Fatalf("offsets topic after refused changes: %+v", ot)
	}
	// The errors keep their identity across brokers.
	_, err = follower.CreateTopic(ctxTimeout(t, 5*time.Second), CreateTopicRequest{Name: "__x", Partitions: 1, ReplicationFactor: 1})
	if code, _ := ErrorCode(err); !isErr(err, ErrInvalidTopic) || code != "INVALID_ARGUMENT" {
		t.Fatalf("reserved name: %v (%s)", err, code)
	}
}
