package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// openBody opens a connection to n and sends a produce request announcing
// a body of announced bytes, of which it sends only the first sent.
func openBody(t *testing.T, n *node, announced, sent int) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(n.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	body := []byte(`{"topic":"orders","message":"` + strings.Repeat("x", max(sent, 40)))[:sent]
	fmt.Fprintf(conn, "POST /produce HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", announced, body)
	return conn
}

// TestSlowBodyIsCutOff: a client that sends its headers and a few bytes of
// its body is answered 408 BODY_TIMEOUT and its connection closed once
// client.io.timeout.ms has passed, instead of being held open forever.
func TestSlowBodyIsCutOff(t *testing.T) {
	s := testSettings()
	s.ClientIOTimeout = 500 * time.Millisecond
	n := startSingle(t, nodeOptions{settings: &s})
	n.expect(t, "POST", "/topics", `{"name":"orders"}`, 201)
	conn := openBody(t, n, 1<<20, 10)
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body after %v: %v", time.Since(start), err)
	}
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 408 || !strings.Contains(string(raw), `"BODY_TIMEOUT"`) {
		t.Fatalf("stalled body: %d %s", resp.StatusCode, raw)
	}
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("the connection of a timed-out body stayed open")
	}
	// A request whose handler does not read its body (a probe, an unknown
	// path): net/http reads the rest before it would reuse the connection,
	// under the same deadline.
	for _, path := range []string{"/health", "/nope"} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(n.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n0123456789", path)
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("GET %s with a stalled body: %v", path, err)
		}
		io.Copy(io.Discard, resp.Body)
		if _, err := br.ReadByte(); err == nil || time.Since(start) > 9*time.Second {
			t.Fatalf("GET %s with a stalled body: the connection stayed open (%v)", path, err)
		}
		conn.Close()
	}
	// A body that arrives in time, on a connection that then waits longer
	// than the timeout for its reply (a long poll), is unaffected.
	subset(t, "produce after a stall", n.expect(t, "POST", "/produce", `{"topic":"orders","partition":0,"message":"ok"}`, 200), `{"offset":0}`)
	st, body := n.do(t, "GET", "/fetch?topic=orders&partition=0&offset=1&wait_ms=1500", "")
	if st != 200 {
		t.Fatalf("long poll past the body timeout: %d %s", st, body)
	}
}

// TestBodyBufferGrowsWithItsBytes: bodies that announce 1 MiB and send
// ten bytes hold about a kilobyte each, not the megabyte announced.
func TestBodyBufferGrowsWithItsBytes(t *testing.T) {
	n := startSingle(t, nodeOptions{})
	n.expect(t, "POST", "/topics", `{"name":"orders"}`, 201)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const bodies = 200
	for range bodies {
		openBody(t, n, 1<<20, 10)
	}
	// Wait until the broker is reading all of them.
	eventually(t, 10*time.Second, "the stalled bodies to be read", func() bool {
		return strings.Count(goroutines(), "readBody") >= bodies
	})
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("heap grew %d KiB for %d stalled 1 MiB bodies", grown>>10, bodies)
	if grown > bodies<<20/4 {
		t.Fatalf("heap grew %d MiB for %d bodies that sent 10 bytes each", grown>>20, bodies)
	}
}

func goroutines() string {
	buf := make([]byte, 8<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// TestRequestBudgetRefusesWhenFull: with the request budget held by large
// bodies on their way in, another large body is refused at once with a
// retriable 503 BROKER_BUSY, while a small produce still gets through (the
// budget keeps a part for small requests); once the large bodies are gone,
// large bodies are served again.
func TestRequestBudgetRefusesWhenFull(t *testing.T) {
	s := testSettings()
	s.MaxRequestBytes = 1 << 20
	s.QueuedMaxRequestBytes = 4 << 20 // 3.5 MiB for any request, 0.5 MiB kept for small ones
	n := startSingle(t, nodeOptions{settings: &s})
	n.expect(t, "POST", "/topics", `{"name":"orders"}`, 201)
	// Six bodies of 400 KiB each hold a 512 KiB buffer: 3 MiB in all. They
	// are opened one after the other: buffers growing at the same time are
	// charged old and new during their copy, and a growth that does not fit
	// is refused, which would leave less than 3 MiB held.
	var held []net.Conn
	for i := range 6 {
		held = append(held, openBody(t, n, 1<<20, 400<<10))
		eventually(t, 10*time.Second, "the held bodies to take the budget", func() bool {
			return metric(t, n, `kairo_memory_pool_in_use_bytes{pool="requests"}`) >= float64((i+1)*512<<10)
		})
	}
	large := `{"topic":"orders","partition":0,"message":"` + strings.Repeat("y", 900<<10) + `"}`
	resp := postRaw(t, n, large)
	if resp.status != 503 || resp.code != "BROKER_BUSY" || resp.retryAfter == "" {
		t.Fatalf("a large body while the budget is held: %d %s (Retry-After %q); want 503 BROKER_BUSY", resp.status, resp.code, resp.retryAfter)
	}
	subset(t, "a small produce meanwhile", n.expect(t, "POST", "/produce", `{"topic":"orders","partition":0,"message":"small"}`, 200), `{"offset":0}`)
	for _, c := range held {
		c.Close()
	}
	eventually(t, 10*time.Second, "the budget to be given back", func() bool {
		return metric(t, n, `kairo_memory_pool_in_use_bytes{pool="requests"}`) == 0
	})
	if resp := postRaw(t, n, large); resp.status != 200 {
		t.Fatalf("a large body once the budget is free: %d %s", resp.status, resp.code)
	}
}

type rawReply struct {
	status           int
	code, retryAfter string
}

func postRaw(t *testing.T, n *node, body string) rawReply {
	t.Helper()
	resp, err := http.Post(n.url+"/produce", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Code string `json:"code"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return rawReply{resp.StatusCode, e.Code, resp.Header.Get("Retry-After")}
}

// TestTooManyRecordsRefusedBeforeDecoding: a produce request's records are
// counted before they are decoded; more than 100000 is 413, and nothing is
// stored.
func TestTooManyRecordsRefusedBeforeDecoding(t *testing.T) {
	n := startSingle(t, nodeOptions{})
	n.expect(t, "POST", "/topics", `{"name":"orders"}`, 201)
	var b bytes.Buffer
	b.WriteString(`{"topic":"orders","partition":0,"records":[{"message":"x"}`)
	for range 100_000 {
		b.WriteString(`,{"message":"x"}`)
	}
	b.WriteString(`]}`)
	st, body := n.do(t, "POST", "/produce", b.String())
	if st != 413 || !strings.Contains(body, `"BODY_TOO_LARGE"`) || !strings.Contains(body, "100001 records") {
		t.Fatalf("100001 records: %d %s", st, body)
	}
	subset(t, "nothing stored", n.expect(t, "GET", "/fetch?topic=orders&partition=0&offset=0", "", 200), `{"records":[],"high_watermark":0}`)
}

// TestFetchReplyIsBoundedByTheBudget: one fetch may take at most half of
// queued.max.response.bytes, so a max_bytes beyond that is lowered (it is
// an upper bound), and long polls hold none of the budget while they wait.
func TestFetchReplyIsBoundedByTheBudget(t *testing.T) {
	s := testSettings()
	s.QueuedMaxResponseBytes = 16 << 20 // one fetch reads at most 16 MiB / 12
	n := startSingle(t, nodeOptions{settings: &s})
	n.expect(t, "POST", "/topics", `{"name":"orders"}`, 201)
	value := strings.Repeat("v", 100<<10)
	for range 40 { // 4 MiB
		n.expect(t, "POST", "/produce", `{"topic":"orders","partition":0,"message":"`+value+`"}`, 200)
	}
	r := n.expect(t, "GET", "/fetch?topic=orders&partition=0&offset=0&max_bytes=67108864&max_records=1000", "", 200)
	got := len(r["records"].([]any)) * len(value)
	if got > (16<<20)/12+len(value) || got == 0 {
		t.Fatalf("a fetch asking 64 MiB read %d bytes; the budget allows %d", got, (16<<20)/12)
	}

	// Thirty long polls at the end of the log, each of which would take
	// a quarter of the budget if it were charged while it waits.
	var wg sync.WaitGroup
	errs := make(chan string, 30)
	for range 30 {
		wg.Go(func() {
			resp, err := http.Get(n.url + "/fetch?topic=orders&partition=0&offset=40&wait_ms=1000&max_bytes=1398101")
			if err != nil {
				errs <- err.Error()
				return
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				errs <- fmt.Sprintf("%d %s", resp.StatusCode, raw)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("a long poll: %s", e)
	}
}
