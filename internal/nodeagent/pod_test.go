package nodeagent

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kairolog/kairolog/internal/imagestore"
)

// These tests run real pods through a podRuntime, without a cluster: the
// fixture program (testdata/fixture), built into an OCI image, is
// "kairolog/broker:test" in a registry of this test process, which the
// pods pull from as the node does; this test binary is the container init,
// as the node's binary is in production. They need root for the
// namespaces and mounts.

var fixtureBinary = sync.OnceValues(func() (string, error) {
	fixtureUsed.Store(true)
	dir, err := os.MkdirTemp("", "nodeagent-fixture-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "fixture")
	// Static, as the images' programs are: the image has no libc.
	cmd := exec.Command("go", "build", "-o", out, "./testdata/fixture")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build fixture: %v\n%s", err, b)
	}
	return out, nil
})

// fixtureUsed is set when the fixture is first built (every pod test needs
// it), so that a run without pod tests (not root, or go test -short) does
// not build the fixture and start its registry only to clean them up.
var fixtureUsed atomic.Bool

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureUsed.Load() {
		if bin, err := fixtureBinary(); err == nil {
			_ = os.RemoveAll(filepath.Dir(bin))
		}
		if r, err := fixtureRegistry(); err == nil {
			r.close()
		}
	}
	os.Exit(code)
}

// eventLog records events in memory.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (e *eventLog) Event(_ k8sruntime.Object, eventType, reason, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, eventType+" "+reason+" "+msg)
}

func (e *eventLog) Eventf(o k8sruntime.Object, eventType, reason, format string, args ...any) {
	e.Event(o, eventType, reason, fmt.Sprintf(format, args...))
}

func (e *eventLog) AnnotatedEventf(o k8sruntime.Object, _ map[string]string, eventType, reason, format string, args ...any) {
	e.Eventf(o, eventType, reason, format, args...)
}

func (e *eventLog) has(substr string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.events {
		if strings.Contains(ev, substr) {
			return true
		}
	}
	return false
}

// testPod is one pod run by a podRuntime.
type testPod struct {
	t      *testing.T
	pr     *podRuntime
	events *eventLog
	src    *fakeSource
	store  *imagestore.Store

	mu   sync.Mutex
	last *corev1.Pod
}

func fixturePod(name string, policy corev1.RestartPolicy) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team", UID: types.UID("uid-" + k8stypesUID(name))},
		Spec: corev1.PodSpec{
			RestartPolicy:                 policy,
			TerminationGracePeriodSeconds: ptr.To[int64](3),
			Containers: []corev1.Container{{
				Name:  "broker",
				Image: "kairolog/broker:test",
				Args:  []string{"--listen=$(POD_IP):8080", "--data-dir=/var/lib/kairolog/data"},
				Env: []corev1.EnvVar{{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
				Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/kairolog/data"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
}

func k8stypesUID(name string) string { return fmt.Sprintf("%s-%d", name, time.Now().UnixNano()) }

func requireRoot(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs containers as processes; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("running containers needs root (mount and UTS namespaces)")
	}
}

// startPod runs pod on a bridge of its own, pulling from the fixture
// registry, and stops it when the test ends.
func startPod(t *testing.T, pod *corev1.Pod, src *fakeSource) *testPod {
	t.Helper()
	return startPodWith(t, pod, src, nil)
}

// storeFor is a node's image store that pulls docker.io images from reg.
func storeFor(t *testing.T, reg *testRegistry) *imagestore.Store {
	t.Helper()
	store, err := imagestore.Open(imagestore.Config{Dir: filepath.Join(t.TempDir(), "images"), Mirrors: map[string]string{"docker.io": reg.host}})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// startPodWith runs pod with the given image store (a fresh one on the
// fixture registry when nil).
func startPodWith(t *testing.T, pod *corev1.Pod, src *fakeSource, store *imagestore.Store) *testPod {
	t.Helper()
	requireRoot(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if src == nil {
		src = newFakeSource()
	}
	// Each pod on a bridge of its own: nothing it binds is on the machine.
	network := testBridge(t)
	gw := network.gateway.To4()
	ip := net.IPv4(gw[0], gw[1], gw[2], 2)
	if store == nil {
		reg, err := fixtureRegistry()
		if err != nil {
			t.Fatal(err)
		}
		store = storeFor(t, reg)
	}
	tp := &testPod{t: t, events: &eventLog{}, src: src, store: store}
	deps := &runtimeDeps{
		store:       store,
		src:         src,
		recorder:    tp.events,
		notify:      func(p *corev1.Pod) { tp.mu.Lock(); tp.last = p; tp.mu.Unlock() },
		hostsFor:    func(p *corev1.Pod, ip string) []byte { return renderHosts(p, ip, nil, nil, "cluster.local") },
		network:     network,
		nodeIP:      network.gateway.String(),
		nameserver:  "127.0.0.1",
		domain:      "cluster.local",
		log:         slog.New(slog.DiscardHandler),
		backoffBase: 300 * time.Millisecond,
		exe:         exe,
		clock:       time.Now,
		resync:      time.Hour,
	}
	tp.pr = newPodRuntime(deps, pod, ip.String(), filepath.Join(t.TempDir(), "pod"))
	go tp.pr.run()
	t.Cleanup(func() {
		select {
		case <-tp.pr.stop(2 * time.Second):
		case <-time.After(10 * time.Second):
			t.Error("pod did not stop")
		}
		tp.pr.releaseNetwork()
	})
	return tp
}

func (tp *testPod) url(path string) string { return "http://" + tp.pr.ip + ":8080" + path }

// wait polls the reported pod until cond holds.
func (tp *testPod) wait(what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	tp.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		tp.mu.Lock()
		p := tp.last
		tp.mu.Unlock()
		if p != nil && cond(p) {
			return p
		}
		time.Sleep(50 * time.Millisecond)
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	var st any
	if tp.last != nil {
		st = tp.last.Status
	}
	var logs []byte
	for _, c := range tp.pr.containers {
		if c.logPath != "" {
			logs, _ = os.ReadFile(c.logPath)
		}
	}
	tp.t.Fatalf("timed out waiting for %s; last status %+v; events %v; last container log:\n%s", what, st, tp.events.events, logs)
	return nil
}

// waitListening waits until the fixture answers HTTP.
func (tp *testPod) waitListening() {
	tp.t.Helper()
	tp.wait("the fixture to listen", func(*corev1.Pod) bool { _, err := get(tp.url("/health")); return err == nil })
}

func ready(p *corev1.Pod) bool { return podReady(p) }

func containerStatus(p *corev1.Pod) corev1.ContainerStatus {
	if len(p.Status.ContainerStatuses) == 0 {
		return corev1.ContainerStatus{}
	}
	return p.Status.ContainerStatuses[0]
}

func TestPodRunsInItsOwnNamespaces(t *testing.T) {
	t.Parallel()
	src := newFakeSource()
	src.configMaps["team/broker-config"] = &corev1.ConfigMap{Data: map[string]string{"broker.properties": "segment.bytes=1024\n"}}
	pod := fixturePod("kairo-0", corev1.RestartPolicyAlways)
	pod.Spec.Hostname, pod.Spec.Subdomain = "kairo-0", "kairo-headless"
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "config", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "broker-config"}}}})
	// A scratch volume on /tmp, as the broker pods have, covers the
	// sandbox and the fixture binary (both under /tmp on the node) only
	// once they are mounted and started.
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	c := &pod.Spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "config", MountPath: "/etc/kairolog", ReadOnly: true},
		corev1.VolumeMount{Name: "tmp", MountPath: os.TempDir()})
	c.ReadinessProbe = &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
		HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}}}
	tp := startPod(t, pod, src)

	p := tp.wait("Ready", ready)
	if p.Status.PodIP != tp.pr.ip || p.Status.Phase != corev1.PodRunning {
		t.Fatalf("status = %+v", p.Status)
	}
	for path, want := range map[string]string{
		"/env?name=POD_IP":         tp.pr.ip,
		"/env?name=KAIRO_DATA_DIR": "/var/lib/kairolog/data", // the image's ENV
		"/hostname":                "kairo-0",
		"/resolve?name=kairo-0.kairo-headless.team.svc.cluster.local": tp.pr.ip,
		"/file?path=/etc/kairolog/broker.properties":                  "segment.bytes=1024\n",
	} {
		if got, err := get(tp.url(path)); err != nil || got != want {
			t.Errorf("GET %s = %q, %v; want %q", path, got, err, want)
		}
	}
	began := time.Now()
	if got, err := get(tp.url("/resolve?name=kafka.example.com")); err != nil || !strings.Contains(got, "refused") {
		t.Errorf("unknown name: %q, %v; want a refused lookup", got, err)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("an unknown name took %s to fail", d)
	}
	// The read-only mount is read-only and the host's files are untouched.
	if got, err := get(tp.url("/write?path=/etc/kairolog/x")); err != nil || !strings.Contains(got, "read-only file system") {
		t.Errorf("write to the read-only ConfigMap volume: %q, %v; want EROFS", got, err)
	}
	host, _ := os.ReadFile("/etc/hosts")
	if strings.Contains(string(host), "kairo-0") {
		t.Error("the pod's hosts file leaked onto the host")
	}
	if h, _ := os.Hostname(); h == "kairo-0" {
		t.Error("the pod's host name leaked onto the host")
	}
	logs, _ := os.ReadFile(tp.pr.containers[0].logPath)
	if !strings.Contains(string(logs), "stdout F fixture started host=kairo-0") || !strings.Contains(string(logs), "stderr F fixture: a line on stderr") {
		t.Errorf("container log:\n%s", logs)
	}
}

func TestRestartPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy      corev1.RestartPolicy
		exit        int
		wantRestart bool
		wantPhase   corev1.PodPhase
	}{
		{corev1.RestartPolicyAlways, 0, true, corev1.PodRunning},
		{corev1.RestartPolicyAlways, 3, true, corev1.PodRunning},
		{corev1.RestartPolicyOnFailure, 0, false, corev1.PodSucceeded},
		{corev1.RestartPolicyOnFailure, 3, true, corev1.PodRunning},
		{corev1.RestartPolicyNever, 0, false, corev1.PodSucceeded},
		{corev1.RestartPolicyNever, 3, false, corev1.PodFailed},
	} {
		t.Run(fmt.Sprintf("%s exit %d", tc.policy, tc.exit), func(t *testing.T) {
			t.Parallel()
			tp := startPod(t, fixturePod("kairo-0", tc.policy), nil)
			tp.wait("running", func(p *corev1.Pod) bool { return containerStatus(p).State.Running != nil })
			tp.waitListening()
			if _, err := get(tp.url(fmt.Sprintf("/exit?code=%d", tc.exit))); err != nil {
				t.Fatal(err)
			}
			if tc.wantRestart {
				p := tp.wait("restarted", func(p *corev1.Pod) bool {
					cs := containerStatus(p)
					return cs.RestartCount == 1 && cs.State.Running != nil
				})
				last := containerStatus(p).LastTerminationState.Terminated
				if last == nil || last.ExitCode != int32(tc.exit) {
					t.Errorf("last termination = %+v, want exit %d", last, tc.exit)
				}
				if p.Status.Phase != tc.wantPhase {
					t.Errorf("phase = %s, want %s", p.Status.Phase, tc.wantPhase)
				}
				// emptyDir outlives a container restart.
				tp.waitListening()
				if got, _ := get(tp.url("/starts")); got != "2" {
					t.Errorf("restarted container counted %q starts, want 2", got)
				}
				return
			}
			p := tp.wait(string(tc.wantPhase), func(p *corev1.Pod) bool { return p.Status.Phase == tc.wantPhase })
			cs := containerStatus(p)
			if cs.RestartCount != 0 || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != int32(tc.exit) {
				t.Errorf("container status = %+v", cs)
			}
			time.Sleep(500 * time.Millisecond)
			if cs := containerStatus(tp.pr.snapshot()); cs.RestartCount != 0 {
				t.Errorf("restarted against restartPolicy %s", tc.policy)
			}
		})
	}
}

func TestCrashLoopBackOff(t *testing.T) {
	t.Parallel()
	tp := startPod(t, fixturePod("kairo-0", corev1.RestartPolicyAlways), nil)
	for i := range 2 {
		tp.wait("running", func(p *corev1.Pod) bool {
			cs := containerStatus(p)
			return cs.State.Running != nil && cs.RestartCount == int32(i)
		})
		tp.waitListening()
		if _, err := get(tp.url("/exit?code=1")); err != nil {
			t.Fatal(err)
		}
	}
	// The first restart is immediate; the second waits in CrashLoopBackOff.
	p := tp.wait("CrashLoopBackOff", func(p *corev1.Pod) bool {
		w := containerStatus(p).State.Waiting
		return w != nil && w.Reason == "CrashLoopBackOff"
	})
	if p.Status.Phase != corev1.PodRunning || ready(p) {
		t.Errorf("crash-looping pod: phase %s ready %v", p.Status.Phase, ready(p))
	}
	if !tp.events.has("BackOff Back-off restarting failed container broker") {
		t.Errorf("no BackOff event: %v", tp.events.events)
	}
	tp.wait("restarted after the back-off", func(p *corev1.Pod) bool { return containerStatus(p).RestartCount == 2 })
}

func TestProbesDriveReadinessAndRestarts(t *testing.T) {
	t.Parallel()
	pod := fixturePod("kairo-0", corev1.RestartPolicyAlways)
	c := &pod.Spec.Containers[0]
	c.ReadinessProbe = &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 1,
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}}}
	c.LivenessProbe = &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 4, InitialDelaySeconds: 1,
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}}
	tp := startPod(t, pod, nil)
	tp.wait("Ready", ready)

	// /ready starts failing: Ready goes False at once, and after four
	// failed liveness probes the container is restarted.
	marker := filepath.Join(tp.pr.dir, "volumes", "empty-dir", "data", "not-ready")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tp.wait("not Ready", func(p *corev1.Pod) bool { return !ready(p) && containerStatus(p).RestartCount == 0 })
	tp.wait("restarted by the liveness probe", func(p *corev1.Pod) bool { return containerStatus(p).RestartCount >= 1 })
	if !tp.events.has("Warning Unhealthy Readiness probe failed: HTTP probe failed with statuscode: 503") ||
		!tp.events.has("Killing Container broker failed liveness probe, will be restarted") {
		t.Errorf("events: %v", tp.events.events)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	tp.wait("Ready again", ready)
}

func TestUnknownImageFailsWithAReason(t *testing.T) {
	t.Parallel()
	pod := fixturePod("web", corev1.RestartPolicyAlways)
	pod.Spec.Containers[0].Image = "nginx:1.27"
	tp := startPod(t, pod, nil)
	p := tp.wait("ErrImagePull", func(p *corev1.Pod) bool {
		w := containerStatus(p).State.Waiting
		return w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff")
	})
	if p.Status.Phase != corev1.PodPending {
		t.Errorf("phase = %s, want Pending", p.Status.Phase)
	}
	if !tp.events.has(`Warning Failed Failed to pull image "nginx:1.27": failed to resolve reference "docker.io/library/nginx:1.27": docker.io/library/nginx:1.27: not found`) {
		t.Errorf("events: %v", tp.events.events)
	}
}

func TestStopIsGracefulAndComplete(t *testing.T) {
	t.Parallel()
	tp := startPod(t, fixturePod("kairo-0", corev1.RestartPolicyAlways), nil)
	p := tp.wait("running", func(p *corev1.Pod) bool { return containerStatus(p).State.Running != nil })
	var pid int
	if _, err := fmt.Sscanf(containerStatus(p).ContainerID, "process://%d", &pid); err != nil {
		t.Fatal(err)
	}
	tp.waitListening()
	select {
	case <-tp.pr.stop(5 * time.Second):
	case <-time.After(10 * time.Second):
		t.Fatal("stop hung")
	}
	final := tp.pr.snapshot()
	term := containerStatus(final).State.Terminated
	if term == nil || term.ExitCode != 0 {
		t.Errorf("after SIGTERM the fixture should exit 0 by itself, got %+v", term)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("process %d still exists", pid)
	}
	logs, _ := os.ReadFile(tp.pr.containers[0].logPath)
	if !strings.Contains(string(logs), "fixture stopping on terminated") {
		t.Errorf("the container did not get SIGTERM first:\n%s", logs)
	}
}
