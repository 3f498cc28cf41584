package fault

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/peer"
)

// brokerProc is one broker process and what is needed to start it again.
type brokerProc struct {
	id      int
	bin     string
	args    []string
	dataDir string
	logPath string
	http    string
	client  *client.Client

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// buildBroker builds cmd/broker once into dir.
func buildBroker(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "broker")
	start := time.Now()
	out, err := exec.Command("go", "build", "-o", bin, "github.com/kairolog/kairolog/cmd/broker").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/broker: %v\n%s", err, out)
	}
	t.Logf("built the broker in %v", time.Since(start).Round(time.Millisecond))
	return bin
}

// freePort returns a port free on host.
func freePort(t *testing.T, host string) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatalf("listen on %s: %v", host, err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// newCluster prepares n brokers on 127.0.0.1..n, every one an initial
// voter, with the properties in config.
func newCluster(t *testing.T, bin string, n int, config string) []*brokerProc {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "broker.properties")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "peer-secret")
	if err := os.WriteFile(secret, []byte(peer.GenerateSecret().Reveal()), 0o600); err != nil {
		t.Fatal(err)
	}
	hosts := make([]string, n)
	httpAddrs, raftAddrs, peerAddrs, voters := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i := range n {
		hosts[i] = "127.0.0." + strconv.Itoa(i+1)
		httpAddrs[i] = net.JoinHostPort(hosts[i], freePort(t, hosts[i]))
		raftAddrs[i] = net.JoinHostPort(hosts[i], freePort(t, hosts[i]))
		peerAddrs[i] = net.JoinHostPort(hosts[i], freePort(t, hosts[i]))
		voters[i] = fmt.Sprintf("%d@%s", i, raftAddrs[i])
	}
	procs := make([]*brokerProc, n)
	for i := range n {
		c, err := client.New(httpAddrs[i], client.WithTimeout(10*time.Second), client.WithUserAgent("fault-test"))
		if err != nil {
			t.Fatal(err)
		}
		p := &brokerProc{id: i, bin: bin, dataDir: filepath.Join(dir, fmt.Sprint("broker-", i)),
			logPath: filepath.Join(dir, fmt.Sprintf("broker-%d.log", i)), http: httpAddrs[i], client: c}
		p.args = []string{"--id", strconv.Itoa(i), "--data-dir", p.dataDir,
			"--listen", httpAddrs[i], "--raft-listen", raftAddrs[i], "--advertised-address", httpAddrs[i],
			"--peer-listen", peerAddrs[i], "--peer-secret-file", secret,
			"--kafka-listen", net.JoinHostPort(hosts[i], "0"), "--kafka-gateway-listen", net.JoinHostPort(hosts[i], "0"),
			"--initial-voters", strings.Join(voters, ","), "--config-file", cfg, "--log-level", "info"}
		procs[i] = p
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.kill()
		}
		if t.Failed() {
			for _, p := range procs {
				tailLog(t, p)
			}
		}
	})
	return procs
}

// start runs the broker process (its output appended to its log file).
func (p *brokerProc) start(t *testing.T) {
	t.Helper()
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(logf, "===== start at %s\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start broker %d: %v", p.id, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(done)
	}()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *brokerProc) kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// stop sends SIGTERM (a graceful stop) and waits up to a minute.
func (p *brokerProc) stop(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Errorf("broker %d did not stop on SIGINT within a minute", p.id)
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
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd == nil {
		t.Fatalf("broker %d is not running", p.id)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%v to broker %d: %v", sig, p.id, err)
	}
}

func (p *brokerProc) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil
}

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
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	t.Logf("---- last lines of broker %d's log (%s):\n%s", p.id, p.logPath, strings.Join(lines[max(0, len(lines)-60):], "\n"))
}
