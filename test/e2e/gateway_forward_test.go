package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kairolog/kairolog/internal/localcluster/childproc"
	"github.com/kairolog/kairolog/internal/syncbuf"
)

// gatewayForward keeps `kubectl port-forward svc/<cluster>` to the Kafka
// gateway running on one local port, as a user leaves it running for kcat.
//
// The local port is kubectl's own choice: the first kubectl is started with
// an empty local port (":9095") and binds a free one itself, so no other
// process can take the port between its choice and its use, as it could if
// the suite picked a port and closed it before kubectl bound it. The port
// then stays the forward's for good: when kubectl exits (its pod went away
// in a rolling restart) it is started again at once on the same port.
type gatewayForward struct {
	ns, target string
	logPath    string

	mu       sync.Mutex
	local    int
	remote   int
	proc     *childproc.Process
	restarts int

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// forwardingLine is kubectl's report of the local port it bound.
var forwardingLine = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:([0-9]+) -> ([0-9]+)`)

// startGatewayForward starts `kubectl -n ns port-forward target :remote`
// and returns once kubectl has said which local port it bound.
func startGatewayForward(ns, target string, remote int) *gatewayForward {
	GinkgoHelper()
	gf := &gatewayForward{ns: ns, target: target, remote: remote,
		logPath: filepath.Join(s.workDir, "port-forward-gateway.log"),
		stop:    make(chan struct{}), done: make(chan struct{})}
	out := &syncbuf.Buffer{}
	proc, err := gf.start(fmt.Sprintf(":%d", remote), out)
	Expect(err).NotTo(HaveOccurred())
	Eventually(func(g Gomega) {
		g.Expect(proc.Exited()).To(BeFalse(), "kubectl port-forward exited:\n%s", gf.Log())
		m := forwardingLine.FindStringSubmatch(out.String())
		g.Expect(m).NotTo(BeNil(), "kubectl has not said which port it bound")
		gf.local, _ = strconv.Atoi(m[1])
	}).WithTimeout(60 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
	gf.proc = proc
	say("kubectl -n %s port-forward %s :%d bound local port %d", ns, target, remote, gf.local)
	go gf.loop()
	onCleanup(gf.Stop)
	return gf
}

// start runs one kubectl port-forward with the given port pair.
func (gf *gatewayForward) start(ports string, stdout *syncbuf.Buffer) (*childproc.Process, error) {
	args := []string{"-n", gf.ns, "port-forward", gf.target, ports, "--address", "127.0.0.1"}
	logf, err := os.OpenFile(gf.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logf, "--- %s kubectl %s\n", time.Now().Format(time.RFC3339Nano), strings.Join(args, " "))
	cmd := exec.Command("kubectl", args...)
	cmd.Env = toolEnv()
	cmd.Stdout, cmd.Stderr = teeWriter{stdout, logf}, logf
	proc, err := childproc.StartProcess("kubectl port-forward", cmd)
	if err != nil {
		_ = logf.Close()
		return nil, err
	}
	go func() { <-proc.Done(); _ = logf.Close() }()
	return proc, nil
}

// loop starts kubectl again on the same local port whenever it exits.
func (gf *gatewayForward) loop() {
	defer close(gf.done)
	for {
		gf.mu.Lock()
		proc := gf.proc
		gf.mu.Unlock()
		select {
		case <-proc.Done():
		case <-gf.stop:
			proc.Stop(2 * time.Second)
			return
		}
		for {
			// kubectl exits at once when the Service does not have the
			// port yet; do not spin.
			select {
			case <-gf.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			gf.mu.Lock()
			ports := fmt.Sprintf("%d:%d", gf.local, gf.remote)
			gf.mu.Unlock()
			next, err := gf.start(ports, &syncbuf.Buffer{})
			if err == nil {
				gf.mu.Lock()
				gf.proc, gf.restarts = next, gf.restarts+1
				gf.mu.Unlock()
				break
			}
		}
	}
}

// Local is the local port kubectl bound.
func (gf *gatewayForward) Local() int { return gf.local }

// SetRemote makes every later kubectl forward to this Service port (the
// cluster's kafkaGatewayPort changed).
func (gf *gatewayForward) SetRemote(remote int) {
	gf.mu.Lock()
	defer gf.mu.Unlock()
	gf.remote = remote
}

// Restart stops the running kubectl; the loop starts the next one, with
// the current remote port.
func (gf *gatewayForward) Restart() {
	gf.mu.Lock()
	proc := gf.proc
	gf.mu.Unlock()
	proc.Stop(2 * time.Second)
}

// Restarts says how often kubectl was started again.
func (gf *gatewayForward) Restarts() int {
	gf.mu.Lock()
	defer gf.mu.Unlock()
	return gf.restarts
}

// Log is every kubectl's output so far.
func (gf *gatewayForward) Log() string {
	b, _ := os.ReadFile(gf.logPath)
	return string(b)
}

// Stop stops kubectl for good.
func (gf *gatewayForward) Stop() {
	gf.stopOnce.Do(func() {
		close(gf.stop)
		<-gf.done
	})
}

// teeWriter writes to both writers; the log file's errors do not stop
// kubectl's output from reaching the buffer.
type teeWriter struct {
	buf  *syncbuf.Buffer
	file *os.File
}

func (t teeWriter) Write(p []byte) (int, error) {
	_, _ = t.file.Write(p)
	return t.buf.Write(p)
}
