package nodeagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kairolog/kairolog/internal/localcluster/childproc"
)

// containerRuntime runs one container of a pod: resolve its image to a
// binary, start it in its own namespaces, probe it, and restart it as the
// pod's restartPolicy says. Every field below mu is guarded by the pod's
// lock, because the pod status is computed from all containers at once.
type containerRuntime struct {
	pod    *podRuntime
	spec   corev1.Container
	isInit bool

	state       corev1.ContainerState
	lastState   corev1.ContainerState
	restarts    int32
	ready       bool
	started     bool // startup probe passed (or none)
	everStarted bool
	willRestart bool
	succeeded   bool
	containerID string
	imageID     string
	imageRef    string         // the image as the node resolved it, for the status
	image       containerImage // of the current run
	env         []string       // of the current run, for exec
	user        *containerUser // of the current run, for exec (nil: the node's)
	logPath     string
	runDone     chan struct{} // closed when the current run's process exits
	proc        *childproc.Process
	kill        chan string // a liveness failure asks the run to stop
	backoff     backoff
	pullBackoff backoff
}

func newContainerRuntime(pr *podRuntime, spec corev1.Container, isInit bool) *containerRuntime {
	return &containerRuntime{
		pod: pr, spec: spec, isInit: isInit,
		state:       corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
		kill:        make(chan string, 1),
		backoff:     backoff{base: pr.deps.backoffBase},
		pullBackoff: backoff{base: pr.deps.backoffBase},
	}
}

func (c *containerRuntime) view() containerView {
	return containerView{
		spec: c.spec, state: c.state, lastState: c.lastState, restarts: c.restarts,
		ready: c.ready, started: c.started, containerID: c.containerID, imageID: c.imageID, imageRef: c.imageRef,
		willRestart: c.willRestart, everStarted: c.everStarted, successfully: c.succeeded,
	}
}

// shouldRestart applies the pod's restartPolicy to an exit code.
func shouldRestart(policy corev1.RestartPolicy, exitCode int32) bool {
	switch policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return exitCode != 0
	}
	return true
}

// run starts the container and restarts it per policy until it is done for
// good or ctx ends (the pod is being stopped). For an init container it
// returns true once the container exited 0.
func (c *containerRuntime) run(ctx context.Context) bool {
	policy := c.pod.spec().Spec.RestartPolicy
	for {
		img, ok := c.acquireImage(ctx)
		if !ok {
			return false
		}
		exit, err := c.runOnce(ctx, img)
		var cfgErr *configError
		if errors.As(err, &cfgErr) {
			// Nothing ran: the kubelet keeps the container waiting and
			// tries again at its next sync, without counting a restart.
			c.pod.setWaiting(c, "CreateContainerConfigError", err.Error())
			c.pod.event(corev1.EventTypeWarning, "Failed", "Error: "+err.Error())
			select {
			case <-ctx.Done():
				return false
			case <-time.After(max(c.pullBackoff.base, time.Second)):
			}
			continue
		}
		if err != nil {
			c.pod.setWaiting(c, "CreateContainerError", err.Error())
			c.pod.event(corev1.EventTypeWarning, "Failed", fmt.Sprintf("Error: %v", err))
			exit = 128
		}
		if ctx.Err() != nil {
			return false
		}
		if c.isInit && exit == 0 {
			c.pod.update(func() { c.succeeded = true })
			return true
		}
		restart := shouldRestart(policy, exit)
		if c.isInit && policy == corev1.RestartPolicyAlways {
			restart = exit != 0 // failed init containers are retried
		}
		if !restart {
			return false
		}
		delay := c.backoff.next()
		if delay > 0 {
			msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", delay.Round(time.Second), c.spec.Name, c.pod.key)
			c.pod.update(func() {
				c.willRestart = true
				c.lastState = c.state
				c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: msg}}
			})
			c.pod.event(corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container "+c.spec.Name+" in pod "+c.pod.name())
			select {
			case <-ctx.Done():
				return false
			case <-time.After(delay):
			}
		}
	}
}

// runOnce starts one run of the container and waits for it to exit.
func (c *containerRuntime) runOnce(ctx context.Context, img containerImage) (int32, error) {
	pr := c.pod
	proc, runDone, err := c.start(ctx, img)
	if err != nil {
		return 0, err
	}
	startedAt := metav1.NewTime(pr.deps.clock())
	hasStartup := c.spec.StartupProbe != nil
	pr.update(func() {
		if c.everStarted {
			c.restarts++
		}
		c.everStarted = true
		c.willRestart = false
		if c.state.Terminated != nil {
			c.lastState = c.state
		}
		c.state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: startedAt}}
		c.containerID = "process://" + strconv.Itoa(proc.Pid())
		c.imageID = img.id()
		if img.pulled != nil {
			c.imageRef = img.pulled.Ref
		}
		c.started = !hasStartup
		c.ready = !c.isInit && c.spec.ReadinessProbe == nil && c.started
		c.proc = proc
		c.runDone = runDone
	})
	c.pod.event(corev1.EventTypeNormal, "Created", "Created container: "+c.spec.Name)
	c.pod.event(corev1.EventTypeNormal, "Started", "Started container "+c.spec.Name)

	probeCtx, stopProbes := context.WithCancel(ctx)
	var probeWG sync.WaitGroup
	if !c.isInit {
		probeWG.Add(1)
		go func() { defer probeWG.Done(); c.probe(probeCtx, proc.Pid()) }()
	}
	defer func() { stopProbes(); probeWG.Wait() }()

	select {
	case <-proc.Done():
	case <-ctx.Done():
		proc.Stop(pr.gracePeriod())
	case why := <-c.kill:
		c.pod.event(corev1.EventTypeNormal, "Killing", why)
		proc.Stop(pr.gracePeriod())
	}
	<-proc.Done()
	<-runDone
	exit, reason := exitStatus(proc.Cmd.ProcessState)
	finishedAt := metav1.NewTime(pr.deps.clock())
	policy := pr.spec().Spec.RestartPolicy
	pr.update(func() {
		c.ready = false
		c.proc = nil
		c.state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exit, Reason: reason, StartedAt: startedAt, FinishedAt: finishedAt, ContainerID: c.containerID,
		}}
		c.willRestart = !c.isInit && ctx.Err() == nil && shouldRestart(policy, exit)
	})
	// A run that lasted long enough resets the crash-loop back-off, as in the kubelet.
	if finishedAt.Sub(startedAt.Time) > backoffReset {
		c.backoff.reset()
	}
	return exit, nil
}

// exitStatus maps a process exit to a container exit code and reason.
func exitStatus(ps *os.ProcessState) (int32, string) {
	if ps == nil {
		return 128, "Error"
	}
	code := int32(ps.ExitCode())
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int32(ws.Signal())
	}
	if code == 0 {
		return 0, "Completed"
	}
	return code, "Error"
}

// start prepares the init spec and starts the process; runDone closes
// once its output has been drained into the log.
func (c *containerRuntime) start(ctx context.Context, img containerImage) (*childproc.Process, chan struct{}, error) {
	pr := c.pod
	// The pod as reported, so that status.podIP and status.hostIP resolve.
	pod := pr.snapshot()
	env, order, err := containerEnv(ctx, pod, &c.spec, pr.deps.src)
	if err != nil {
		return nil, nil, err
	}
	mounts, err := pr.volumes.mounts(&c.spec)
	if err != nil {
		return nil, nil, err
	}
	system := []hostMount{
		{Source: pr.hostsPath(), Target: "/etc/hosts"},
		{Source: pr.resolvPath(), Target: "/etc/resolv.conf"},
	}
	var spec podInitSpec
	if img.pulled != nil {
		spec, err = c.imageSpec(pod, img.pulled, env, order, append(system, mounts...))
	} else {
		spec, err = c.binarySpec(*img.binary, env, order, append(system, mounts...))
	}
	if err != nil {
		return nil, nil, err
	}
	spec.Hostname = podHostname(pod)
	// A pod has its own network, UTS and PID namespaces unless it asks for
	// the node's (hostNetwork, hostPID), as with a kubelet.
	unshare := uintptr(syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS)
	var clone uintptr
	if spec.Root != nil && !pod.Spec.HostPID {
		clone = syscall.CLONE_NEWPID
	}
	var extraFiles []*os.File
	if pod.Spec.HostNetwork {
		unshare = syscall.CLONE_NEWNS
		spec.Hostname = ""
	} else if ns := pr.network().file(); ns != nil {
		extraFiles = []*os.File{ns}
		spec.NetNSFD = 3 // the first of ExtraFiles
	}
	specPath := filepath.Join(pr.dir, "init", c.spec.Name+".json")
	if err := writeJSON(specPath, spec); err != nil {
		return nil, nil, err
	}

	logDir := filepath.Join(pr.dir, "logs", c.spec.Name)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, nil, err
	}
	pr.mu.Lock()
	run := c.restarts
	if c.everStarted {
		run++
	}
	pr.mu.Unlock()
	logPath := filepath.Join(logDir, strconv.Itoa(int(run))+".log")
	sink, err := newLogSink(logPath)
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		_ = sink.Close()
		return nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		_ = sink.Close()
		_ = outR.Close()
		_ = outW.Close()
		return nil, nil, err
	}

	cmd := exec.Command(pr.deps.exe)
	cmd.Args = []string{"kairo-local-pod-init"}
	cmd.Env = []string{podInitEnv + "=" + specPath}
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.ExtraFiles = extraFiles
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: unshare, Cloneflags: clone}
	proc, err := childproc.StartProcess(pr.key+"/"+c.spec.Name, cmd)
	// The child holds its own copies; ours must close so EOF means "exited".
	_ = outW.Close()
	_ = errW.Close()
	if err != nil {
		_ = outR.Close()
		_ = errR.Close()
		_ = sink.Close()
		return nil, nil, err
	}
	runDone := make(chan struct{})
	var copies sync.WaitGroup
	copies.Add(2)
	go func() { defer copies.Done(); sink.copyFrom(outR, "stdout"); _ = outR.Close() }()
	go func() { defer copies.Done(); sink.copyFrom(errR, "stderr"); _ = errR.Close() }()
	go func() {
		<-proc.Done()
		// Grandchildren may keep the pipes open; do not wait for them forever.
		waited := make(chan struct{})
		go func() { copies.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(2 * time.Second):
			_ = outR.Close()
			_ = errR.Close()
		}
		_ = sink.Close()
		close(runDone)
	}()
	pr.update(func() {
		c.logPath = logPath
		c.image = img
		c.env = spec.Env
		c.user = spec.User
	})
	return proc, runDone, nil
}

// probe runs the container's startup, liveness and readiness probes for one
// run, until ctx ends.
func (c *containerRuntime) probe(ctx context.Context, pid int) {
	pr := c.pod
	pr.mu.Lock()
	target := probeTarget{podIP: pr.ip, ports: c.spec.Ports, pid: pid, env: c.env, user: c.user}
	pr.mu.Unlock()
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}

	if sp := c.spec.StartupProbe; sp != nil {
		p := probeDefaults(sp)
		if !sleep(time.Duration(p.InitialDelaySeconds) * time.Second) {
			return
		}
		failures := int32(0)
		for {
			err := runProbe(ctx, &p, target)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				pr.update(func() {
					c.started = true
					c.ready = c.spec.ReadinessProbe == nil
				})
				break
			}
			failures++
			pr.event(corev1.EventTypeWarning, "Unhealthy", "Startup probe failed: "+err.Error())
			if failures >= p.FailureThreshold {
				c.requestKill(fmt.Sprintf("Container %s failed startup probe, will be restarted", c.spec.Name))
				return
			}
			if !sleep(time.Duration(p.PeriodSeconds) * time.Second) {
				return
			}
		}
	}

	var wg sync.WaitGroup
	if lp := c.spec.LivenessProbe; lp != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := probeDefaults(lp)
			st := probeState{probe: p}
			st.probe.SuccessThreshold = 1 // liveness and startup require 1
			alive := true
			if !sleep(time.Duration(p.InitialDelaySeconds) * time.Second) {
				return
			}
			for {
				err := runProbe(ctx, &p, target)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					pr.event(corev1.EventTypeWarning, "Unhealthy", "Liveness probe failed: "+err.Error())
				}
				alive, _ = st.record(err == nil, alive)
				if !alive {
					c.requestKill(fmt.Sprintf("Container %s failed liveness probe, will be restarted", c.spec.Name))
					return
				}
				if !sleep(time.Duration(p.PeriodSeconds) * time.Second) {
					return
				}
			}
		}()
	}
	if rp := c.spec.ReadinessProbe; rp != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := probeDefaults(rp)
			st := probeState{probe: p}
			ready := false
			if !sleep(time.Duration(p.InitialDelaySeconds) * time.Second) {
				return
			}
			for {
				err := runProbe(ctx, &p, target)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					pr.event(corev1.EventTypeWarning, "Unhealthy", "Readiness probe failed: "+err.Error())
				}
				var changed bool
				ready, changed = st.record(err == nil, ready)
				if changed {
					r := ready
					pr.update(func() { c.ready = r && c.state.Running != nil })
				}
				if !sleep(time.Duration(p.PeriodSeconds) * time.Second) {
					return
				}
			}
		}()
	}
	wg.Wait()
}

func (c *containerRuntime) requestKill(why string) {
	select {
	case c.kill <- why:
	default:
	}
}

// stopRun stops the current run, if any (used when the pod spec changes the
// container's image).
func (c *containerRuntime) stopRun(why string) {
	c.pod.mu.Lock()
	running := c.proc != nil
	c.pod.mu.Unlock()
	if running {
		c.requestKill(why)
	}
}

// withImageEnv puts the image's ENV first, minus what the container sets.
func withImageEnv(imageEnv []string, env map[string]string, order []string) []string {
	var out []string
	for _, kv := range imageEnv {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := env[k]; !ok {
			out = append(out, kv)
		}
	}
	return append(out, envList(env, order)...)
}

func mountedAt(mounts []hostMount, target string) bool {
	for _, m := range mounts {
		if filepath.Clean(m.Target) == filepath.Clean(target) {
			return true
		}
	}
	return false
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// backoff is the kubelet's crash-loop back-off: the first restart is
// immediate, then base (10s) doubling up to 5 minutes; ten minutes of
// running resets it.
type backoff struct {
	n    int
	base time.Duration
}

const (
	defaultBackoffBase = 10 * time.Second
	backoffMax         = 5 * time.Minute
	backoffReset       = 10 * time.Minute
)

func (b *backoff) next() time.Duration {
	b.n++
	if b.n == 1 {
		return 0
	}
	base := b.base
	if base <= 0 {
		base = defaultBackoffBase
	}
	d := base << min(b.n-2, 20)
	if d > backoffMax {
		d = backoffMax
	}
	return d
}

func (b *backoff) reset() { b.n = 0 }
