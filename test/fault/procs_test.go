package fault

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/internal/brokertest"
)

// brokerProc is one broker of the test's brokertest.Cluster, with the calls
// the fault tests make on it.
type brokerProc struct {
	c       *brokertest.Cluster
	id      int
	props   []byte // the properties file every start is given
	dataDir string
	http    string // host:port of its client listener
	client  *client.Client
	// args are flags for its next start beyond the cluster's own (a later
	// value of a flag wins).
	args []string
}

// newCluster prepares n brokers, every one an initial voter, with the
// properties in config.
func newCluster(t *testing.T, n int, config string) []*brokerProc {
	t.Helper()
	bin, err := brokertest.Build()
	if err != nil {
		t.Fatal(err)
	}
	procs := make([]*brokerProc, n)
	c, err := brokertest.NewCluster(brokertest.Options{Brokers: n, Voters: n, Binary: bin, Dir: t.TempDir(),
		Args: func(i int) []string { return procs[i].args }})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		httpAddr := strings.TrimPrefix(c.Endpoint(i), "http://")
		cl, err := client.New(httpAddr, client.WithTimeout(10*time.Second), client.WithUserAgent("fault-test"))
		if err != nil {
			t.Fatal(err)
		}
		procs[i] = &brokerProc{c: c, id: i, props: []byte(config), dataDir: c.DataDir(i), http: httpAddr, client: cl}
	}
	t.Cleanup(func() {
		for i := range procs {
			_ = c.Kill(i)
		}
		if t.Failed() {
			for _, p := range procs {
				tailLog(t, p)
			}
		}
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return procs
}

// start runs the broker process (its output appended to its log file).
func (p *brokerProc) start(t *testing.T) {
	t.Helper()
	if err := p.c.StartWithProperties(p.id, p.props); err != nil {
		t.Fatal(err)
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *brokerProc) kill() { _ = p.c.Kill(p.id) }

// stop stops the broker gracefully (SIGTERM) and waits for it to exit.
func (p *brokerProc) stop(t *testing.T) {
	t.Helper()
	if err := p.c.Stop(p.id); err != nil {
		t.Error(err)
	}
}

// pause stops the process with SIGSTOP: it holds its sockets and files
// but runs nothing until resume, like a process stuck in a long GC pause
// or a VM that was frozen.
func (p *brokerProc) pause(t *testing.T) {
	t.Helper()
	p.signal(t, syscall.SIGSTOP)
}

// resume continues a paused process with SIGCONT.
func (p *brokerProc) resume(t *testing.T) {
	t.Helper()
	p.signal(t, syscall.SIGCONT)
}

func (p *brokerProc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	pid := p.c.PID(p.id)
	if pid == 0 {
		t.Fatalf("broker %d is not running", p.id)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("%v to broker %d: %v", sig, p.id, err)
	}
}

func (p *brokerProc) running() bool { return p.c.Running(p.id) }

// waitReady polls /ready.
func (p *brokerProc) waitReady(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := p.client.Ready(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("broker %d not ready after %v: %v", p.id, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func tailLog(t *testing.T, p *brokerProc) {
	logPath := p.c.LogFile(p.id)
	data, err := os.ReadFile(logPath)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	t.Logf("---- last lines of broker %d's log (%s):\n%s", p.id, logPath, strings.Join(lines[max(0, len(lines)-60):], "\n"))
}

// startAll starts every broker and waits until each is ready.
func startAll(t *testing.T, procs []*brokerProc) {
	t.Helper()
	for _, p := range procs {
		p.start(t)
	}
	for _, p := range procs {
		p.waitReady(t, time.Minute)
	}
}

// createReplicatedTopic creates a topic on all three brokers that
// acknowledges acks=all writes only with two replicas in sync.
func createReplicatedTopic(t *testing.T, procs []*brokerProc, name string, partitions int32) {
	t.Helper()
	if _, err := procs[0].client.CreateTopic(context.Background(), api.CreateTopicRequest{Name: name, Partitions: partitions,
		ReplicationFactor: 3, Config: map[string]string{"min.insync.replicas": "2"}}); err != nil {
		t.Fatal(err)
	}
}
