package scale

import (
	"bytes"
	"context"
	byteorder "encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/internal/brokertest"
)

// binary is a broker binary under measurement.
type binary struct{ name, path string }

// binaries are KAIRO_BENCH_BROKERS ("name=path,name=path"), measured side
// by side, or this tree's cmd/broker alone.
func binaries(t testing.TB) []binary {
	t.Helper()
	v := os.Getenv("KAIRO_BENCH_BROKERS")
	if v == "" {
		p, err := brokertest.Build()
		if err != nil {
			t.Fatal(err)
		}
		return []binary{{"this-tree", p}}
	}
	var out []binary
	for _, item := range strings.Split(v, ",") {
		name, path, ok := strings.Cut(item, "=")
		if !ok {
			t.Fatalf("KAIRO_BENCH_BROKERS: %q is not name=path", item)
		}
		out = append(out, binary{name, path})
	}
	return out
}

// inRoundOrder gives the binaries in the order round (counted from 0)
// runs them: the order turns by one each round, so no binary always runs
// right after another one's cluster, while the page cache that cluster
// dirtied is still being written back.
func inRoundOrder(bins []binary, round int) []binary {
	n := len(bins)
	out := make([]binary, 0, n)
	for i := range n {
		out = append(out, bins[(i+round)%n])
	}
	return out
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil && d > 0 {
		return d
	}
	return def
}

// benchMemoryLimit is each benchmarked broker's memory limit.
const benchMemoryLimit = "1GiB"

// benchCluster is three broker processes of one binary. Every broker's
// peer listener is advertised behind a proxy that counts the requests the
// other brokers send it, so both binaries are counted the same way.
type benchCluster struct {
	*brokertest.Cluster
	proxies []*peerProxy
}

// startCluster starts three brokers of bin with config and waits until
// they are ready. Each serves Go's pprof profiles on its DebugAddress.
// With countPeers, each broker's peer listener is advertised behind a
// counting proxy (peerRequests); without, the brokers talk directly, as a
// throughput measurement wants.
func startCluster(t testing.TB, bin binary, config map[string]string, countPeers bool) *benchCluster {
	t.Helper()
	bc := &benchCluster{proxies: make([]*peerProxy, 3)}
	opts := brokertest.Options{
		Brokers: 3, Binary: bin.path, Dir: t.TempDir(), LogLevel: "warn", Config: config, Debug: true,
		// Each broker is given 1 GiB, as a container with a memory limit
		// gives it: a broker that knows its limit collects garbage less
		// often (cmd/broker/gc.go); a broker of an earlier version only
		// gets a soft limit it never reaches here.
		Env: []string{"GOMEMLIMIT=" + benchMemoryLimit},
	}
	if countPeers {
		opts.Args = func(i int) []string {
			return []string{"--peer-advertised-address", bc.proxies[i].addr}
		}
	}
	c, err := brokertest.NewCluster(opts)
	if err != nil {
		t.Fatal(err)
	}
	bc.Cluster = c
	t.Cleanup(func() { _ = c.Close() })
	if countPeers {
		for i := range 3 {
			bc.proxies[i] = startPeerProxy(t, c.PeerAddress(i))
		}
	}
	if err := c.StartAll(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return bc
}

// cpu is the CPU time the three broker processes have used.
func (bc *benchCluster) cpu() []time.Duration {
	out := make([]time.Duration, 3)
	for i := range out {
		out[i] = processCPU(bc.PID(i))
	}
	return out
}

// peerRequests is how many peer requests each broker has received, by
// path.
func (bc *benchCluster) peerRequests() []map[string]int64 {
	out := make([]map[string]int64, 3)
	for i, p := range bc.proxies {
		if p == nil {
			out[i] = map[string]int64{}
			continue
		}
		out[i] = p.counts()
	}
	return out
}

// profile, when KAIRO_BENCH_PROFILE names a directory, starts a CPU
// profile of every broker over the next window, written there as
// name-broker-i.pprof; the function it returns waits for them. The
// profiles come from each broker's --debug-listen address.
func (bc *benchCluster) profile(t testing.TB, name string, window time.Duration) (wait func()) {
	dir := os.Getenv("KAIRO_BENCH_PROFILE")
	if dir == "" {
		return func() {}
	}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", bc.DebugAddress(i), int(window.Seconds()))
			hc := &http.Client{Timeout: window + time.Minute}
			resp, err := hc.Get(url)
			if err != nil {
				t.Errorf("profile of broker %d: %v", i, err)
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("%s: %s", resp.Status, body)
			}
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-broker-%d.pprof", name, i)), body, 0o644)
			}
			if err != nil {
				t.Errorf("profile of broker %d: %v", i, err)
			}
		}()
	}
	return wg.Wait
}

// processCPU is the user and system CPU time of a process, from
// /proc/<pid>/stat (in clock ticks of 10 ms).
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// peerProxy forwards a broker's peer traffic and counts it by path.
type peerProxy struct {
	addr   string
	srv    *http.Server
	mu     sync.Mutex
	byPath map[string]*atomic.Int64
}

func startPeerProxy(t testing.TB, target string) *peerProxy {
	t.Helper()
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	p := &peerProxy{addr: ln.Addr().String(), byPath: map[string]*atomic.Int64{}}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host, r.Out.Host = "http", target, target
		},
		Transport: &http.Transport{MaxIdleConns: 8192, MaxIdleConnsPerHost: 8192, IdleConnTimeout: 90 * time.Second},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			// A long poll the caller gave up on (a broker closing, the
			// cluster stopping) is no error of the measurement.
			if !errors.Is(err, context.Canceled) {
				log.Printf("peer proxy to %s: %s: %v", target, r.URL.Path, err)
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.counter(r.URL.Path).Add(1)
		if r.URL.Path == peer.StreamPath {
			p.tunnel(w, r, target)
			return
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() { _ = p.srv.Close() })
	return p
}

// tunnel passes a peer stream on to target, counting each call it carries
// under its operation's path, as the HTTP request it stands for would be.
func (p *peerProxy) tunnel(w http.ResponseWriter, r *http.Request, target string) {
	up, err := net.Dial("tcp", target)
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	defer up.Close()
	var head bytes.Buffer
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\n", r.Method, r.URL.RequestURI(), target)
	_ = r.Header.Write(&head)
	head.WriteString("\r\n")
	if _, err := up.Write(head.Bytes()); err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	go func() {
		_, _ = io.Copy(conn, up) // the upgrade's answer, then the replies
		conn.Close()
	}()
	// After the upgrade the caller sends frames: a 4-byte length, then a
	// kind (1: a call), an id, flags, an epoch and the operation's name
	// (broker/peer's streamframe.go).
	for {
		var size [4]byte
		if _, err := io.ReadFull(brw.Reader, size[:]); err != nil {
			return
		}
		frame := make([]byte, byteorder.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(brw.Reader, frame); err != nil {
			return
		}
		if len(frame) >= 16 && frame[0] == 1 {
			if n := int(byteorder.BigEndian.Uint16(frame[14:16])); 16+n <= len(frame) {
				p.counter(peer.PathPrefix + string(frame[16:16+n])).Add(1)
			}
		}
		if _, err := up.Write(append(size[:], frame...)); err != nil {
			return
		}
	}
}

func (p *peerProxy) counter(path string) *atomic.Int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.byPath[path]
	if n == nil {
		n = new(atomic.Int64)
		p.byPath[path] = n
	}
	return n
}

func (p *peerProxy) counts() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int64, len(p.byPath))
	for k, v := range p.byPath {
		out[k] = v.Load()
	}
	return out
}

// createTopics creates n topics prefix-0000… of partitions partitions at
// replication factor 3 from 16 clients.
func createTopics(t testing.TB, c *client.Client, prefix string, n int, partitions int32, config map[string]string) []string {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	parallel(t, n, 16, func(i int) error {
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
			_, err := c.CreateTopic(context.Background(), api.CreateTopicRequest{Name: names[i], Partitions: partitions,
				ReplicationFactor: 3, Config: config})
			switch {
			case api.IsCode(err, api.CodeTopicAlreadyExists):
				// The client retried a create whose first answer was
				// lost on the loaded machine; the first one made it.
				return nil
			case api.IsCode(err, api.CodeInvalidReplicationFactor) && time.Now().Before(deadline):
				// A broker missed its heartbeats under the load and is
				// fenced until its next one: wait for it.
				continue
			}
			return err
		}
	})
	return names
}

// parallel runs f(0..n-1) on workers goroutines and fails on the first
// error.
func parallel(t testing.TB, n, workers int, f func(i int) error) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// partitionsInSync reports how many partitions of topics named prefix…
// the cluster has, and whether every partition of the cluster, internal
// ones included, has every replica in its committed ISR.
func partitionsInSync(c *client.Client, prefix string) (created int, allInSync bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	md, err := c.Metadata(ctx)
	if err != nil {
		return 0, false, err
	}
	allInSync = true
	for _, tp := range md.Topics {
		for _, p := range tp.Partitions {
			if strings.HasPrefix(tp.Name, prefix) {
				created++
			}
			if len(p.ISR) != len(p.Replicas) {
				allInSync = false
			}
		}
	}
	return created, allInSync, nil
}

// waitInSync waits until the topics named prefix… have want partitions
// and every partition of the cluster is in sync.
func waitInSync(t testing.TB, c *client.Client, prefix string, want int, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		created, allInSync, err := partitionsInSync(c, prefix)
		if err == nil && created >= want && allInSync {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("after %v: %d partitions of %s… (want %d), all in sync: %v, error: %v", timeout, created, prefix, want, allInSync, err)
		}
		time.Sleep(time.Second)
	}
}

// loadAverage is the machine's 1-minute load average.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
