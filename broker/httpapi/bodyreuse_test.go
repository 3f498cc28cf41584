package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/config"
)

// batchBody is a produce of n keyless records of size bytes to topic,
// each value naming tag and its index.
func batchBody(topic, tag string, n, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"topic":%q,"acks":"all","records":[`, topic)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		v := fmt.Sprintf("%s-%d-", tag, i)
		fmt.Fprintf(&b, `{"value":"%s%s"}`, v, strings.Repeat("v", max(size-len(v), 0)))
	}
	b.WriteString("]}")
	return b.String()
}

// TestProduceReusesItsBodyBuffers: a batched produce's body is read into
// buffers kept from earlier requests. Decoding its records, the log's
// batch and this test's recorder take about 1.8 times its body; fresh
// buffers for the body and every buffer it grew through took twice its
// size again.
func TestProduceReusesItsBodyBuffers(t *testing.T) {
	n := startSingle(t, nodeOptions{})
	n.expect(t, "POST", "/topics", `{"name":"reuse","partitions":1}`, 201)
	body := batchBody("reuse", "r", 1000, 200)
	h := n.srv.Config.Handler
	produce := func() {
		req := httptest.NewRequest("POST", "/produce", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("produce: %d %s", w.Code, w.Body)
		}
	}
	produce() // the buffers' first use
	const requests = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range requests {
		produce()
	}
	runtime.ReadMemStats(&after)
	perRequest := (after.TotalAlloc - before.TotalAlloc) / requests
	t.Logf("a produce of %d body bytes allocated %d bytes", len(body), perRequest)
	if perRequest > 2*uint64(len(body)) {
		t.Errorf("a produce of %d body bytes allocated %d bytes: its body was read into fresh buffers", len(body), perRequest)
	}
}

// TestPooledBodiesKeepEveryRecord: produces through one broker of three,
// most passed on to another leader, from many clients at once, with
// failing requests among them, store every acknowledged record as it was
// sent: no body buffer is reused while a record in it is still on its way.
// Each client's first produces create their topics, so their records wait
// in their bodies for the metadata while the other clients read theirs.
func TestPooledBodiesKeepEveryRecord(t *testing.T) {
	c := newTestCluster(t, 3, 3, func(s *config.Settings) {
		s.AutoCreateTopics, s.NumPartitions, s.DefaultReplicationFactor = true, 2, 3
	})
	entry := c.nodes[0]
	const clients, rounds, topics = 6, 15, 3
	topic := func(g, i int) string { return fmt.Sprintf("pooled-%d-%d", g, i%topics) }
	var mu sync.Mutex
	acked := map[string]int{} // a record's tag and index: its value's length
	var wg sync.WaitGroup
	for g := range clients {
		wg.Go(func() {
			for i := range rounds {
				tag := fmt.Sprintf("c%d-r%d", g, i)
				// Sizes across classes, so buffers of each class are reused.
				size := []int{20, 150, 700, 3000}[(g+i)%4]
				status, _ := entry.do(t, "POST", "/produce", batchBody(topic(g, i), tag, 100, size))
				if status == http.StatusOK {
					mu.Lock()
					for j := range 100 {
						prefix := fmt.Sprintf("%s-%d-", tag, j)
						acked[prefix] = max(size, len(prefix))
					}
					mu.Unlock()
				}
				// A malformed body and one for a partition that does not
				// exist: refused, their buffers not kept.
				entry.do(t, "POST", "/produce", batchBody(topic(g, i), tag, 50, size)[:size*10])
				entry.do(t, "POST", "/produce", `{"topic":"`+topic(g, i)+`","records":[{"partition":99,"value":"x"}]}`)
			}
		})
	}
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no produce was acknowledged")
	}
	stored := 0
	for g := range clients {
		for i := range topics {
			for p := range int32(2) {
				for _, v := range fetchAll(t, entry, topic(g, i), p) {
					prefix := v[:strings.LastIndexByte(strings.TrimRight(v, "v"), '-')+1]
					want, ok := acked[prefix]
					if !ok {
						t.Fatalf("%s-%d holds %.60q, which no acknowledged produce sent", topic(g, i), p, v)
					}
					if strings.Trim(v[len(prefix):], "v") != "" || len(v) != want {
						t.Fatalf("%s-%d holds %.60q (%d bytes, %d sent): its value was overwritten", topic(g, i), p, v, len(v), want)
					}
					stored++
				}
			}
		}
	}
	if stored != len(acked) {
		t.Errorf("%d records stored, %d acknowledged", stored, len(acked))
	}
	// The followers hold the leaders' bytes: the batches read for them and
	// the replies they received went through kept buffers too.
	var names []string
	for g := range clients {
		for i := range topics {
			names = append(names, topic(g, i))
		}
	}
	c.waitSettled(30*time.Second, names...)
	for _, name := range names {
		for p := range int32(2) {
			eventually(t, 10*time.Second, fmt.Sprintf("the replicas of %s-%d to hold the same bytes", name, p), func() bool {
				first := c.logBytes(0, name, p)
				return bytes.Equal(first, c.logBytes(1, name, p)) && bytes.Equal(first, c.logBytes(2, name, p))
			})
		}
	}
}
