package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/client"
)

// newProducer asks n for a producer id.
func newProducer(t *testing.T, n *node) int64 {
	t.Helper()
	reply := n.expect(t, "POST", "/producers", "", 201)
	if reply["producer_epoch"] != float64(0) {
		t.Fatalf("POST /producers: %v", reply)
	}
	return int64(reply["producer_id"].(float64))
}

// TestIdempotentProduce walks the HTTP contract of an idempotent producer:
// a retry with the same sequence answers the same offsets and writes
// nothing, a gap and an old epoch are refused, and malformed producer
// fields are 400s.
func TestIdempotentProduce(t *testing.T) {
	n := startSingle(t, nodeOptions{})
	n.expect(t, "POST", "/topics", `{"name":"orders","partitions":2}`, 201)
	id := newProducer(t, n)
	if other := newProducer(t, n); other == id {
		t.Fatalf("two producers got id %d", id)
	}
	body := func(epoch, seq int, extra string) string {
		return fmt.Sprintf(`{"topic":"orders","partition":1,"producer_id":%d,"producer_epoch":%d,"sequence":%d%s}`, id, epoch, seq, extra)
	}
	steps := []struct {
		name, body string
		status     int
		want       string // fields of the reply
	}{
		{"first", body(0, 0, `,"message":"a"`), 200, `{"partition":1,"offset":0}`},
		{"its retry", body(0, 0, `,"message":"a"`), 200, `{"partition":1,"offset":0,"duplicate":true}`},
		{"a batch", body(0, 1, `,"records":[{"value":"b"},{"value":"c"}]`), 200, `{"records":[{"partition":1,"offset":1},{"partition":1,"offset":2}]}`},
		{"the batch again", body(0, 1, `,"records":[{"value":"b"},{"value":"c"}]`), 200, `{"duplicate":true,"records":[{"partition":1,"offset":1},{"partition":1,"offset":2}]}`},
		{"a gap", body(0, 5, `,"message":"d"`), 409, `{"code":"OUT_OF_ORDER_SEQUENCE_NUMBER"}`},
		{"a new epoch not from 0", body(1, 3, `,"message":"d"`), 409, `{"code":"OUT_OF_ORDER_SEQUENCE_NUMBER"}`},
		{"a new epoch", body(1, 0, `,"message":"d"`), 200, `{"offset":3}`},
		{"the old epoch", body(0, 3, `,"message":"e"`), 409, `{"code":"INVALID_PRODUCER_EPOCH"}`},
		{"sequence missing", fmt.Sprintf(`{"topic":"orders","partition":1,"producer_id":%d,"producer_epoch":0,"message":"x"}`, id), 400, `{"code":"MISSING_FIELD"}`},
		{"negative sequence", body(1, -1, `,"message":"x"`), 400, `{"code":"INVALID_ARGUMENT"}`},
		{"epoch past int16", body(40000, 0, `,"message":"x"`), 400, `{"code":"INVALID_ARGUMENT"}`},
		{"never handed out", `{"topic":"orders","partition":1,"producer_id":123456789,"producer_epoch":0,"sequence":0,"message":"x"}`, 400, `{"code":"INVALID_ARGUMENT"}`},
		{"keyless without a partition", fmt.Sprintf(`{"topic":"orders","producer_id":%d,"producer_epoch":1,"sequence":1,"message":"x"}`, id), 400, `{"code":"INVALID_ARGUMENT"}`},
		{"two partitions", fmt.Sprintf(`{"topic":"orders","producer_id":%d,"producer_epoch":1,"sequence":1,"records":[{"partition":0,"value":"x"},{"partition":1,"value":"y"}]}`, id), 400, `{"code":"INVALID_ARGUMENT"}`},
		{"keyed records of one partition", fmt.Sprintf(`{"topic":"orders","producer_id":%d,"producer_epoch":1,"sequence":1,"records":[{"key":"k","value":"x"},{"key":"k","value":"y"}]}`, id), 200, `{}`},
	}
	for _, s := range steps {
		st, b := n.do(t, "POST", "/produce", s.body)
		if st != s.status {
			t.Fatalf("%s: %d %s, want %d", s.name, st, b, s.status)
		}
		subset(t, s.name, mustDecode(t, b), s.want)
		if s.status == 200 && !strings.Contains(s.name, "again") && !strings.Contains(s.name, "retry") && strings.Contains(b, "duplicate") {
			t.Fatalf("%s: a first send answered as a duplicate: %s", s.name, b)
		}
	}
	if got := fetchAll(t, n, "orders", 1); strings.Join(got, ",") != "a,b,c,d" {
		t.Fatalf("partition 1 holds %q, want a,b,c,d each once", got)
	}
}

// TestIdempotentProduceThroughAnotherBroker: a produce sent to a broker
// that does not lead the partition is passed on to the leader with its
// producer, and the leader's "duplicate" comes back.
func TestIdempotentProduceThroughAnotherBroker(t *testing.T) {
	nodes := startCluster(t, 3)
	nodes[0].expect(t, "POST", "/topics", `{"name":"orders","partitions":1,"replication_factor":3}`, 201)
	waitTopic(t, nodes, "orders", 1)
	leader := int(leaderOf(t, nodes[0], "orders", 0))
	other := nodes[(leader+1)%3]
	id := newProducer(t, nodes[(leader+2)%3])
	req := fmt.Sprintf(`{"topic":"orders","partition":0,"producer_id":%d,"producer_epoch":0,"sequence":0,"acks":"all","message":"once"}`, id)
	first := other.expect(t, "POST", "/produce", req, 200)
	again := other.expect(t, "POST", "/produce", req, 200)
	if again["duplicate"] != true || again["offset"] != first["offset"] || first["duplicate"] != nil {
		t.Fatalf("first %v, again %v", first, again)
	}
	if got := fetchAll(t, nodes[leader], "orders", 0); len(got) != 1 {
		t.Fatalf("the leader holds %q", got)
	}
}

func mustDecode(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("reply is not a JSON object: %q", body)
	}
	return m
}

// leaderOf is the leader of topic-p as n describes it.
func leaderOf(t *testing.T, n *node, topic string, p int) float64 {
	t.Helper()
	desc := n.expect(t, "GET", "/topics/"+topic, "", 200)
	return desc["partitions"].([]any)[p].(map[string]any)["leader"].(float64)
}

// TestProducerRetriesLostReplies: a client.Producer whose replies are lost
// on the way back (the broker stored the batch, the client saw a 504 or a
// broken connection) sends again with the same sequence, and every record
// is stored once.
func TestProducerRetriesLostReplies(t *testing.T) {
	n := startSingle(t, nodeOptions{})
	n.expect(t, "POST", "/topics", `{"name":"orders","partitions":3}`, 201)
	target, err := url.Parse(n.url)
	if err != nil {
		t.Fatal(err)
	}
	var produces atomic.Int64
	rp := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/produce" {
			rp.ServeHTTP(w, r)
			return
		}
		k := produces.Add(1)
		if k%3 != 0 {
			rp.ServeHTTP(w, r)
			return
		}
		// Let the broker store it, then lose the reply.
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, r)
		if k%2 == 0 {
			w.WriteHeader(http.StatusGatewayTimeout)
			return
		}
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
		}
	}))
	defer proxy.Close()
	c, err := client.New(proxy.URL, client.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.NewIdempotentProducer(context.Background(), "orders", client.ProducerOptions{Acks: client.AcksAll})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for i := range 60 {
		var recs []client.ProduceRecord
		for j := range 1 + i%4 {
			v := fmt.Sprintf("r%d-%d", i, j)
			want[v] = true
			key := fmt.Sprintf("k%d", (i+j)%5)
			if i%3 == 0 {
				recs = append(recs, client.ProduceRecord{Value: v}) // keyless: round robin
			} else {
				recs = append(recs, client.ProduceRecord{Key: &key, Value: v})
			}
		}
		pos, err := p.Send(context.Background(), recs)
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		for j, ps := range pos {
			if !ps.Stored() {
				t.Fatalf("send %d record %d not stored: %+v", i, j, ps)
			}
		}
	}
	count := map[string]int{}
	for part := range int32(3) {
		for _, v := range fetchAll(t, n, "orders", part) {
			count[v]++
		}
	}
	for v := range want {
		if count[v] != 1 {
			t.Errorf("%s stored %d times", v, count[v])
		}
	}
	if len(count) != len(want) {
		t.Errorf("%d distinct records stored, %d sent", len(count), len(want))
	}
	st := p.Stats()
	t.Logf("%d requests, %d retries, %d answered as duplicates", st.Requests.Load(), st.Retries.Load(), st.Duplicates.Load())
	if st.Duplicates.Load() == 0 || st.Retries.Load() == 0 {
		t.Fatalf("no reply was lost: %d retries, %d duplicates", st.Retries.Load(), st.Duplicates.Load())
	}
}

// TestProducerStartsANewEpochAfterAGap: when a partition expects another
// sequence than a client.Producer's (records it had acknowledged are
// gone, or another process wrote with its id), the broker answers
// OUT_OF_ORDER_SEQUENCE_NUMBER and writes nothing; the producer moves to
// its next epoch, which starts every partition at sequence 0, sends the
// records again, and they are stored once. Its other partitions continue
// in the new epoch too.
func TestProducerStartsANewEpochAfterAGap(t *testing.T) {
	n := startSingle(t, nodeOptions{})
	n.expect(t, "POST", "/topics", `{"name":"orders","partitions":2}`, 201)
	c, err := client.New(n.url)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := c.NewIdempotentProducer(ctx, "orders", client.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zero, one := int32(0), int32(1)
	// Three records under the producer's id and epoch that the producer
	// does not know of: partition 0 now expects sequence 3.
	n.expect(t, "POST", "/produce", fmt.Sprintf(`{"topic":"orders","partition":0,"producer_id":%d,"producer_epoch":0,"sequence":0,`+
		`"records":[{"value":"x1"},{"value":"x2"},{"value":"x3"}]}`, p.ID().ID), 200)

	steps := []struct {
		part  *int32
		value string
	}{{&zero, "a"}, {&zero, "b"}, {&one, "c"}, {&zero, "d"}}
	for _, s := range steps {
		pos, err := p.Send(ctx, []client.ProduceRecord{{Partition: s.part, Value: s.value}})
		if err != nil || !pos[0].Stored() || pos[0].Duplicate {
			t.Fatalf("send %s: %+v, %v", s.value, pos, err)
		}
	}
	if got := p.Stats().EpochBumps.Load(); got != 1 || p.ID().Epoch != 1 {
		t.Fatalf("%d epoch bumps, epoch %d; want one bump to epoch 1", got, p.ID().Epoch)
	}
	if got := strings.Join(fetchAll(t, n, "orders", 0), ","); got != "x1,x2,x3,a,b,d" {
		t.Fatalf("partition 0 holds %s", got)
	}
	if got := strings.Join(fetchAll(t, n, "orders", 1), ","); got != "c" {
		t.Fatalf("partition 1 holds %s", got)
	}
	// The old epoch is fenced on the partition that saw the new one.
	n.expect(t, "POST", "/produce", fmt.Sprintf(`{"topic":"orders","partition":0,"producer_id":%d,"producer_epoch":0,"sequence":3,"message":"late"}`,
		p.ID().ID), 409)
}
