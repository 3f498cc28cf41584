package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestIdempotentRetryAfterLeaderCrash: a producer's acks=all batches are
// committed, the partition's leader crashes, and the producer sends its
// last batches again through another broker. The new leader, which built
// the producer's state from the batches it copied as a follower, answers
// each with the offsets the old leader gave and "duplicate": true, writes
// nothing, refuses a gap, and stores the next batch at the log end.
func TestIdempotentRetryAfterLeaderCrash(t *testing.T) {
	c := newTestCluster(t, 3, 3, nil)
	c.nodes[0].expect(t, "POST", "/topics", `{"name":"orders","partitions":1,"replication_factor":3,"config":{"min.insync.replicas":"2"}}`, 201)
	c.waitSettled(20*time.Second, "orders")
	id := newProducer(t, c.nodes[0])
	batch := func(seq int, values ...string) string {
		recs := make([]string, len(values))
		for i, v := range values {
			recs[i] = fmt.Sprintf(`{"value":%q}`, v)
		}
		return fmt.Sprintf(`{"topic":"orders","partition":0,"acks":"all","producer_id":%d,"producer_epoch":0,"sequence":%d,"records":[%s]}`,
			id, seq, strings.Join(recs, ","))
	}
	offsets := func(reply map[string]any) string {
		var out []string
		for _, r := range reply["records"].([]any) {
			out = append(out, fmt.Sprint(r.(map[string]any)["offset"]))
		}
		return strings.Join(out, ",")
	}
	sent := []struct {
		seq    int
		values []string
	}{{0, []string{"a", "b"}}, {2, []string{"c", "d", "e"}}, {5, []string{"f"}}}
	first := make([]string, len(sent))
	for i, s := range sent {
		first[i] = offsets(c.nodes[0].expect(t, "POST", "/produce", batch(s.seq, s.values...), 200))
	}

	leader := int(c.describe(c.nodes[0], "orders")[0].Leader)
	c.crash(leader)
	other := c.any()
	eventually(t, 20*time.Second, "a new leader", func() bool {
		p := c.describe(other, "orders")[0]
		return p.Leader >= 0 && int(p.Leader) != leader
	})
	// A producer sends a request refused with a retriable 503 (the new
	// leader settling in) again with the same sequence.
	retried := func(body string) map[string]any {
		t.Helper()
		var reply map[string]any
		eventually(t, 10*time.Second, "a produce the new leader answers", func() bool {
			status, b := other.do(t, "POST", "/produce", body)
			if status == 503 {
				return false
			}
			if status != 200 {
				t.Fatalf("produce %s: %d %s", body, status, b)
			}
			reply = mustDecode(t, b)
			return true
		})
		return reply
	}
	for i, s := range sent {
		reply := retried(batch(s.seq, s.values...))
		if reply["duplicate"] != true || offsets(reply) != first[i] {
			t.Fatalf("retry of sequence %d on the new leader: offsets %s, duplicate %v; first sent at %s", s.seq, offsets(reply), reply["duplicate"], first[i])
		}
	}
	other.expect(t, "POST", "/produce", batch(7, "gap"), 409)
	if got := offsets(retried(batch(6, "g"))); got != "6" {
		t.Fatalf("the next batch went to offset %s, want 6", got)
	}
	if got := strings.Join(fetchAll(t, other, "orders", 0), ","); got != "a,b,c,d,e,f,g" {
		t.Fatalf("the partition holds %s", got)
	}
}
