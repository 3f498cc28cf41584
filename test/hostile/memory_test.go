package hostile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// rssBoundMiB is the peak resident memory the broker stays under while it
// is attacked with the default settings. What it holds live is the
// request budget (queued.max.request.bytes, 100 MiB) plus about 10 KiB of
// buffers per open connection (20 MiB for 2000), and the Go runtime lets
// the heap grow to about twice what was live at the last collection
// before it collects again: 2 × 120 MiB, plus goroutine stacks and the
// runtime. Measured: 378–413 MiB.
const rssBoundMiB = 512

// The attack of TestMemoryStaysBounded.
const (
	slowConnections = 2000
	slowBodyBytes   = 1 << 20
	slowChunk       = 1 << 10
	slowInterval    = 500 * time.Millisecond
	floodClients    = 20
	floodBodyBytes  = 16 << 20 // max.request.bytes
	attackFor       = 45 * time.Second
	// ioTimeout is the broker's client.io.timeout.ms default.
	ioTimeout = 30 * time.Second
	// maxNormalGap is the longest the normal producer may go without a
	// record stored: a few seconds of 503s and retries, never an outage.
	maxNormalGap = 10 * time.Second
)

// TestMemoryStaysBounded: slow bodies, large bodies and a normal producer
// at once against one broker process. See the package comment.
func TestMemoryStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a broker process under attack for about a minute")
	}
	raiseFileLimit(t, 3*slowConnections+1000)
	c := startBroker(t, nil)
	base := c.Endpoint(0)
	pid := c.PID(0)
	for _, name := range []string{"orders", "flood"} {
		resp, err := http.Post(base+"/topics", "application/json", strings.NewReader(`{"name":"`+name+`"}`))
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("create %s: %v %v", name, resp, err)
		}
		resp.Body.Close()
	}
	before, _ := memoryKiB(pid, "VmRSS")

	ctx, cancel := context.WithTimeout(context.Background(), attackFor)
	defer cancel()
	var wg sync.WaitGroup
	slow := &slowStats{}
	for i := range slowConnections {
		wg.Go(func() {
			// Spread the dials over two seconds, as a real flood arrives.
			time.Sleep(time.Duration(i) * time.Millisecond)
			slow.run(ctx, c.Endpoint(0))
		})
	}
	flood := &floodStats{statuses: map[string]int{}}
	for i := range floodClients {
		wg.Go(func() { flood.run(ctx, base, i) })
	}
	normal := &normalProducer{base: base}
	wg.Go(func() { normal.run(ctx) })
	wg.Wait()

	peak, err := memoryKiB(pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("broker RSS: %d MiB before the attack, peak %d MiB during it (bound %d MiB)", before>>10, peak>>10, rssBoundMiB)
	t.Logf("slow connections: %d opened, %d cut by the broker, longest open %v, %d refused at dial",
		slow.opened, slow.cut, slow.longest.Round(time.Millisecond), slow.dialErrors)
	t.Logf("16 MiB bodies: %d sent, answers %v", flood.sent, flood.statuses)
	t.Logf("normal produce: %d records stored, %d answered 503 first (retried), slowest %v, longest without a stored record %v",
		len(normal.stored), normal.retried, normal.slowest.Round(time.Millisecond), normal.longestGap.Round(time.Millisecond))

	if peak>>10 >= rssBoundMiB {
		t.Errorf("peak RSS %d MiB, bound %d MiB", peak>>10, rssBoundMiB)
	}
	if slow.longest > ioTimeout+10*time.Second {
		t.Errorf("a slow connection stayed open %v; client.io.timeout.ms is %v", slow.longest, ioTimeout)
	}
	if slow.cut == 0 {
		t.Errorf("no slow connection was cut by the broker")
	}
	for status := range flood.statuses {
		if !strings.HasPrefix(status, "413 ") && !strings.HasPrefix(status, "503 BROKER_BUSY") && !strings.HasPrefix(status, "transport") {
			t.Errorf("a 16 MiB body was answered %s; want 413 or a retriable 503 BROKER_BUSY", status)
		}
	}
	if normal.err != nil {
		t.Fatalf("normal produce: %v", normal.err)
	}
	if normal.longestGap > maxNormalGap {
		t.Fatalf("no normal record was stored for %v (at most %v allowed)", normal.longestGap, maxNormalGap)
	}
	checkStoredOnce(t, base, "orders", normal.stored)
}

// slowStats are the slow connections' outcomes.
type slowStats struct {
	mu                      sync.Mutex
	opened, cut, dialErrors int
	longest                 time.Duration
}

// run opens a connection that sends a produce request announcing a 1 MiB
// body and then sends it a kilobyte every half second, and opens another
// each time the broker closes one, until ctx ends.
func (s *slowStats) run(ctx context.Context, base string) {
	addr := strings.TrimPrefix(base, "http://")
	header := fmt.Sprintf("POST /produce HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, slowBodyBytes)
	chunk := append([]byte(`{"topic":"flood","message":"`), bytes.Repeat([]byte("x"), slowChunk)...)
	for ctx.Err() == nil {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			s.mu.Lock()
			s.dialErrors++
			s.mu.Unlock()
			sleep(ctx, time.Second)
			continue
		}
		s.mu.Lock()
		s.opened++
		s.mu.Unlock()
		opened := time.Now()
		_, err = conn.Write([]byte(header))
		for sent := 0; err == nil && sent < slowBodyBytes && ctx.Err() == nil; sent += len(chunk) {
			if !sleep(ctx, slowInterval) {
				break
			}
			_, err = conn.Write(chunk[:min(len(chunk), slowBodyBytes-sent)])
		}
		conn.Close()
		if err != nil { // the broker closed it
			s.mu.Lock()
			s.cut++
			s.longest = max(s.longest, time.Since(opened))
			s.mu.Unlock()
		}
	}
}

// floodStats are the answers to the 16 MiB bodies.
type floodStats struct {
	mu       sync.Mutex
	sent     int
	statuses map[string]int
}

// run sends 16 MiB produce bodies back to back until ctx ends, in turn:
// a million records with empty values, one record of 16 MiB, and a body
// over the limit sent chunked (no Content-Length).
func (f *floodStats) run(ctx context.Context, base string, worker int) {
	bodies := [][]byte{emptyRecordsBody(), oneRecordBody()}
	hc := &http.Client{Transport: &http.Transport{}, Timeout: 2 * ioTimeout}
	defer hc.CloseIdleConnections()
	for n := worker; ctx.Err() == nil; n++ {
		var body io.Reader
		contentLength := int64(-1)
		if kind := n % 3; kind < 2 {
			body, contentLength = bytes.NewReader(bodies[kind]), int64(len(bodies[kind]))
		} else {
			body = io.LimitReader(zeroes{}, floodBodyBytes+1<<20)
		}
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/produce", body)
		req.ContentLength = contentLength
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		status := ""
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			status = "transport error"
		} else {
			status = answer(resp)
		}
		f.mu.Lock()
		f.sent++
		f.statuses[status]++
		f.mu.Unlock()
	}
}

// answer is "status CODE" of a reply (Retry-After noted for a 503).
func answer(resp *http.Response) string {
	defer resp.Body.Close()
	var body struct {
		Code string `json:"code"`
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = jsonUnmarshal(raw, &body)
	s := fmt.Sprintf("%d %s", resp.StatusCode, body.Code)
	if resp.StatusCode == 503 && resp.Header.Get("Retry-After") == "" {
		s += " without Retry-After"
	}
	return s
}

func emptyRecordsBody() []byte {
	var b bytes.Buffer
	b.WriteString(`{"topic":"flood","records":[{"message":""}`)
	for b.Len() < floodBodyBytes-20 {
		b.WriteString(`,{"message":""}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

func oneRecordBody() []byte {
	prefix, suffix := `{"topic":"flood","message":"`, `"}`
	return []byte(prefix + strings.Repeat("v", floodBodyBytes-len(prefix)-len(suffix)) + suffix)
}

// zeroes is an endless body of '0's.
type zeroes struct{}

func (zeroes) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
