package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kairolog/kairolog/internal/heldport"
	"github.com/kairolog/kairolog/internal/localcluster/childproc"
	"github.com/kairolog/kairolog/internal/syncbuf"
)

// The users' tools — kubectl, helm, kairoctl — run as subprocesses with the
// local cluster's kubeconfig in KUBECONFIG, exactly as in the docs.

// toolEnv is the environment of every CLI the suite runs: the caller's,
// with the cluster's kubeconfig and helm's state kept inside the run.
func toolEnv() []string {
	env := append(os.Environ(),
		"KUBECONFIG="+s.kubeconfig,
		"HELM_CACHE_HOME="+filepath.Join(s.workDir, "helm", "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(s.workDir, "helm", "config"),
		"HELM_DATA_HOME="+filepath.Join(s.workDir, "helm", "data"),
	)
	return env
}

// secrets are strings run never shows: passwords the suite read from a
// Secret and passes on a command line.
var secrets struct {
	mu   sync.Mutex
	list []string
}

// hideInLogs makes run show secret as <hidden> in the command lines it
// logs and in its errors.
func hideInLogs(secret string) {
	if secret == "" {
		return
	}
	secrets.mu.Lock()
	defer secrets.mu.Unlock()
	secrets.list = append(secrets.list, secret)
}

// hidden is s with every secret replaced.
func hidden(s string) string {
	secrets.mu.Lock()
	defer secrets.mu.Unlock()
	for _, secret := range secrets.list {
		s = strings.ReplaceAll(s, secret, "<hidden>")
	}
	return s
}

// run runs a CLI to completion with stdin, logs the command line (secrets
// hidden), and returns its standard output; a non-zero exit is an error
// carrying the standard error.
func run(ctx context.Context, stdin, path string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = toolEnv()
	cmd.Dir = s.repo // paths as in the docs: charts/…, config/samples/…
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	line := hidden(filepath.Base(path) + " " + strings.Join(args, " "))
	say("$ %s", line)
	err := cmd.Run()
	if err != nil {
		return stdout.String(), fmt.Errorf("%s: %w\n%s%s", line, err, hidden(stderr.String()), hidden(stdout.String()))
	}
	return stdout.String(), nil
}

// kubectl runs kubectl against the local cluster.
func kubectl(ctx context.Context, args ...string) (string, error) {
	return run(ctx, "", "kubectl", args...)
}

// kubectlApply applies a manifest from standard input, as `kubectl apply -f -`.
func kubectlApply(ctx context.Context, ns, manifest string) error {
	_, err := run(ctx, manifest, "kubectl", "-n", ns, "apply", "-f", "-")
	return err
}

// helm runs the helm CLI built into bin/.
func helm(ctx context.Context, args ...string) (string, error) {
	return run(ctx, "", filepath.Join(s.bin, "helm"), args...)
}

// mustKubectl runs kubectl and fails the scenario if it fails.
func mustKubectl(ctx context.Context, args ...string) string {
	GinkgoHelper()
	out, err := kubectl(ctx, args...)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// portForward keeps `kubectl port-forward <target> <local>:<remote>`
// running on one local port, as a user would: when kubectl exits (its pod
// went away) or the forward stops answering, it starts kubectl again, which
// picks a ready pod of the Service.
type portForward struct {
	ns, target string
	remote     int
	local      int
	// base is the forwarded address clients use; alive is the watchdog's
	// check of it.
	base  string
	alive func(base string) error
	// held keeps local from being given to anyone else while kubectl
	// (started again on it after a failure) binds it itself.
	held    *heldport.Bound
	logPath string

	mu       sync.Mutex
	proc     *childproc.Process
	restarts int
	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// startPortForward starts a port-forward and waits until /health answers
// through it.
func startPortForward(ns, target string, remote int) *portForward {
	GinkgoHelper()
	return startPortForwardProbed(ns, target, remote, func(base string) error {
		_, err := httpGet(base + "/health")
		return err
	})
}

// startPortForwardProbed starts a port-forward and waits until probe,
// given the forwarded base URL, succeeds through it.
func startPortForwardProbed(ns, target string, remote int, probe func(base string) error) *portForward {
	GinkgoHelper()
	held, err := heldport.Hold("127.0.0.1")
	Expect(err).NotTo(HaveOccurred())
	base := "http://127.0.0.1:" + strconv.Itoa(held.Port())
	return startPortForwardHeld(ns, target, held, remote, base, probe, func(base string) error {
		_, err := httpGetTimeout(base+"/health", 2*time.Second)
		return err
	})
}

// startPortForwardHeld starts a port-forward from the local port held
// keeps to remote, clients reaching it at base; it waits until probe
// succeeds, and the watchdog starts kubectl again when alive fails three
// times in a row.
func startPortForwardHeld(ns, target string, held *heldport.Bound, remote int, base string,
	probe, alive func(base string) error) *portForward {
	GinkgoHelper()
	pf := &portForward{ns: ns, target: target, remote: remote, local: held.Port(), held: held, base: base, alive: alive,
		stop: make(chan struct{}), done: make(chan struct{})}
	pf.logPath = filepath.Join(s.workDir, fmt.Sprintf("port-forward-%d.log", pf.local))
	go pf.loop()
	go pf.watchdog()
	onCleanup(pf.Stop)
	Eventually(func() error { return probe(pf.URL()) }).
		WithTimeout(60 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
	say("kubectl -n %s port-forward %s %d:%d is forwarding", ns, target, pf.local, remote)
	return pf
}

// URL is the forwarded address: http://127.0.0.1:<local>, or the base
// it was started with.
func (pf *portForward) URL() string { return pf.base }

// Local is the local port.
func (pf *portForward) Local() int { return pf.local }

// Restarts says how often kubectl had to be started again.
func (pf *portForward) Restarts() int {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	return pf.restarts
}

func (pf *portForward) loop() {
	defer close(pf.done)
	for first := true; ; first = false {
		if !first {
			select {
			case <-pf.stop:
				return
			case <-time.After(300 * time.Millisecond):
			}
		}
		args := []string{"-n", pf.ns, "port-forward", pf.target,
			fmt.Sprintf("%d:%d", pf.local, pf.remote), "--address", "127.0.0.1"}
		logf, err := os.OpenFile(pf.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return
		}
		fmt.Fprintf(logf, "--- %s kubectl %s\n", time.Now().Format(time.RFC3339Nano), strings.Join(args, " "))
		cmd := exec.Command("kubectl", args...)
		cmd.Env = toolEnv()
		cmd.Stdout, cmd.Stderr = logf, logf
		proc, err := childproc.StartProcess("kubectl port-forward", cmd)
		if err != nil {
			_ = logf.Close()
			continue
		}
		pf.mu.Lock()
		pf.proc = proc
		if !first {
			pf.restarts++
		}
		pf.mu.Unlock()
		select {
		case <-proc.Done():
			_ = logf.Close()
		case <-pf.stop:
			proc.Stop(2 * time.Second)
			_ = logf.Close()
			return
		}
	}
}

// watchdog restarts kubectl when the forward has not answered (alive:
// /health) for three seconds: kubectl keeps running when the pod it picked
// stops answering, and a user would start it again.
func (pf *portForward) watchdog() {
	failures := 0
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-pf.stop:
			return
		case <-tick.C:
		}
		if err := pf.alive(pf.base); err == nil {
			failures = 0
			continue
		}
		if failures++; failures < 3 {
			continue
		}
		failures = 0
		pf.mu.Lock()
		proc := pf.proc
		pf.mu.Unlock()
		if proc != nil && !proc.Exited() {
			_ = proc.Signal(syscall.SIGKILL)
		}
	}
}

// Stop stops kubectl for good.
func (pf *portForward) Stop() {
	pf.stopOnce.Do(func() {
		close(pf.stop)
		<-pf.done
		_ = pf.held.Close()
	})
}

// consumerProc is a `kairoctl consume` process: a member of a consumer
// group that prints the records it consumes.
type consumerProc struct {
	proc    *childproc.Process
	logPath string
	out     *syncbuf.Buffer
}

// startConsumer runs `kairoctl --broker <broker> consume <topics> --group <group> --from-beginning`.
func startConsumer(broker, group string, topics ...string) *consumerProc {
	GinkgoHelper()
	args := append([]string{"--broker", broker, "consume"}, topics...)
	args = append(args, "--group", group, "--from-beginning")
	c := &consumerProc{out: &syncbuf.Buffer{}, logPath: filepath.Join(s.workDir, "consume-"+group+".log")}
	logf, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(filepath.Join(s.bin, "kairoctl"), args...)
	cmd.Env = toolEnv()
	cmd.Stdout, cmd.Stderr = c.out, logf
	say("$ kairoctl %s", strings.Join(args, " "))
	c.proc, err = childproc.StartProcess("kairoctl consume", cmd)
	Expect(err).NotTo(HaveOccurred())
	go func() { <-c.proc.Done(); _ = logf.Close() }()
	onCleanup(func() { c.proc.Stop(5 * time.Second) })
	return c
}

// Lines returns what the consumer printed so far, one record per line.
func (c *consumerProc) Lines() []string {
	out := strings.TrimRight(c.out.String(), "\n")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// Interrupt stops the consumer as Ctrl-C does (it leaves the group) and
// waits for it to exit.
func (c *consumerProc) Interrupt() error {
	_ = c.proc.Signal(syscall.SIGINT)
	select {
	case <-c.proc.Done():
		return c.proc.Err()
	case <-time.After(15 * time.Second):
		c.proc.Stop(time.Second)
		return fmt.Errorf("kairoctl consume did not exit within 15s of SIGINT")
	}
}

// Log is kairoctl's standard error.
func (c *consumerProc) Log() string {
	b, _ := os.ReadFile(c.logPath)
	return string(b)
}

var httpClient = &http.Client{Timeout: 40 * time.Second}
