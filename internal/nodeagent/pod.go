package nodeagent

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kairolog/kairolog/internal/imagestore"
)

// runtimeDeps is what a pod runtime needs from the node.
type runtimeDeps struct {
	// store pulls and unpacks images; images maps repositories to binaries
	// of this machine instead (the developer fallback, nil by default).
	store    *imagestore.Store
	images   ImageMap
	src      objectSource
	recorder record.EventRecorder
	notify   func(*corev1.Pod)
	hostsFor func(pod *corev1.Pod, ip string) []byte
	// network gives each pod its own network namespace; nil runs every pod
	// in the node's, as hostNetwork pods (the unit tests do this).
	network     *podNetwork
	nodeIP      string
	nameserver  string
	domain      string
	log         *slog.Logger
	backoffBase time.Duration
	exe         string // the binary re-executed as the container init
	clock       func() time.Time
	resync      time.Duration // how often projected volumes are refreshed
}

// podRuntime is one pod on this node: its sandbox directory, address,
// volumes and containers. It is created when the pod is bound to the node
// and lives until its processes are gone.
type podRuntime struct {
	deps    *runtimeDeps
	key     string // namespace/name
	podName string
	dir     string
	ip      string

	mu             sync.Mutex
	pod            *corev1.Pod
	lastStatus     *corev1.PodStatus
	startTime      metav1.Time
	sandboxReady   bool
	initDone       bool
	initFailed     bool
	reason, msg    string
	initContainers []*containerRuntime
	containers     []*containerRuntime
	grace          time.Duration
	terminating    bool

	netns    *podNetNS // nil until the sandbox exists, and for hostNetwork pods
	volumes  *podVolumes
	finalize sync.Once
	ctx      context.Context
	cancel   context.CancelFunc
	done     chan struct{}
}

func newPodRuntime(deps *runtimeDeps, pod *corev1.Pod, ip, dir string) *podRuntime {
	ctx, cancel := context.WithCancel(context.Background())
	pr := &podRuntime{
		deps: deps, key: pod.Namespace + "/" + pod.Name, podName: pod.Name, dir: dir, ip: ip,
		pod: pod, startTime: metav1.NewTime(deps.clock()),
		ctx: ctx, cancel: cancel, done: make(chan struct{}),
	}
	pr.volumes = newPodVolumes(pod, filepath.Join(dir, "volumes"), deps.src)
	for _, c := range pod.Spec.InitContainers {
		pr.initContainers = append(pr.initContainers, newContainerRuntime(pr, c, true))
	}
	for _, c := range pod.Spec.Containers {
		pr.containers = append(pr.containers, newContainerRuntime(pr, c, false))
	}
	if len(pr.initContainers) == 0 {
		pr.initDone = true
	}
	return pr
}

func (pr *podRuntime) name() string { return pr.podName }

// spec returns the latest pod object from the API (not to be modified).
func (pr *podRuntime) spec() *corev1.Pod {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.pod
}

func (pr *podRuntime) hostsPath() string  { return filepath.Join(pr.dir, "etc-hosts") }
func (pr *podRuntime) resolvPath() string { return filepath.Join(pr.dir, "resolv.conf") }

// gracePeriod is how long containers get between SIGTERM and SIGKILL.
func (pr *podRuntime) gracePeriod() time.Duration {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.terminating {
		return pr.grace
	}
	if s := pr.pod.Spec.TerminationGracePeriodSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return 30 * time.Second
}

// update changes runtime state under the lock and publishes the resulting
// pod status.
func (pr *podRuntime) update(change func()) {
	pr.mu.Lock()
	change()
	pod := pr.snapshotLocked()
	pr.mu.Unlock()
	pr.deps.notify(pod)
}

func (pr *podRuntime) setWaiting(c *containerRuntime, reason, msg string) {
	pr.update(func() {
		if c.state.Terminated != nil {
			c.lastState = c.state
		}
		c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
	})
}

// snapshot returns the pod with the status the node reports for it.
func (pr *podRuntime) snapshot() *corev1.Pod {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.snapshotLocked()
}

func (pr *podRuntime) snapshotLocked() *corev1.Pod {
	v := podView{
		pod: pr.pod, podIP: pr.ip, hostIP: pr.deps.nodeIP, startTime: pr.startTime,
		sandboxReady: pr.sandboxReady, initDone: pr.initDone, initFailed: pr.initFailed,
		reason: pr.reason, msg: pr.msg,
	}
	for _, c := range pr.initContainers {
		v.initContainers = append(v.initContainers, c.view())
	}
	for _, c := range pr.containers {
		v.containers = append(v.containers, c.view())
	}
	st := podStatus(v, pr.lastStatus, metav1.NewTime(pr.deps.clock()))
	pr.lastStatus = &st
	pod := pr.pod.DeepCopy()
	pod.Status = *st.DeepCopy()
	return pod
}

func (pr *podRuntime) event(eventType, reason, msg string) {
	pr.deps.recorder.Event(pr.spec(), eventType, reason, msg)
}

// setPod takes a newer version of the pod from the API. Only metadata and
// container images may change on a running pod; a changed image restarts
// that container, as the kubelet does.
func (pr *podRuntime) setPod(pod *corev1.Pod) {
	pr.mu.Lock()
	pr.pod = pod
	pr.volumes.setPod(pod)
	var changed []*containerRuntime
	for i, c := range pr.containers {
		if i < len(pod.Spec.Containers) && c.spec.Image != pod.Spec.Containers[i].Image {
			c.spec = pod.Spec.Containers[i]
			changed = append(changed, c)
		}
	}
	pr.mu.Unlock()
	for _, c := range changed {
		c.stopRun("Container " + c.spec.Name + " definition changed, will be restarted")
	}
}

// run is the pod's lifecycle: sandbox, volumes, init containers, then the
// containers until they are done or the pod is stopped.
func (pr *podRuntime) run() {
	defer close(pr.done)
	ctx := pr.ctx
	pr.update(func() {})

	if !pr.retry(ctx, "FailedCreatePodSandBox", pr.prepareSandbox) {
		return
	}
	if !pr.retry(ctx, "FailedMount", func() error { return pr.volumes.setup(ctx) }) {
		return
	}
	pr.update(func() { pr.sandboxReady = true })
	go pr.refreshVolumes(ctx)

	for _, c := range pr.initContainers {
		if !c.run(ctx) {
			if ctx.Err() == nil {
				pr.update(func() { pr.initFailed = true })
			}
			return
		}
	}
	pr.update(func() { pr.initDone = true })

	var wg sync.WaitGroup
	for _, c := range pr.containers {
		wg.Add(1)
		go func() { defer wg.Done(); c.run(ctx) }()
	}
	wg.Wait()
}

// retry runs step until it succeeds, reporting failures as a Warning event
// (when the message changes, and then every tenth attempt) with a growing
// delay, and gives up only when the pod is stopped.
func (pr *podRuntime) retry(ctx context.Context, reason string, step func() error) bool {
	delay := 250 * time.Millisecond
	last := ""
	for attempt := 0; ; attempt++ {
		err := step()
		if err == nil {
			if last != "" {
				pr.update(func() { pr.reason, pr.msg = "", "" })
			}
			return true
		}
		if err.Error() != last || attempt%10 == 0 {
			pr.event(corev1.EventTypeWarning, reason, err.Error())
			pr.deps.log.Info("Pod not ready to start", "pod", pr.key, "reason", reason, "err", err)
		}
		last = err.Error()
		select {
		case <-ctx.Done():
			return false
		case <-time.After(delay):
		}
		delay = min(delay*2, 5*time.Second)
	}
}

// prepareSandbox creates the pod's network namespace, directories, hosts
// file and resolver configuration.
func (pr *podRuntime) prepareSandbox() error {
	if err := pr.attachNetwork(); err != nil {
		return err
	}
	for _, d := range []string{"init", "logs", "volumes", "rootfs"} {
		if err := os.MkdirAll(filepath.Join(pr.dir, d), 0o755); err != nil {
			return err
		}
	}
	pod := pr.spec()
	if _, err := rewriteInPlace(pr.hostsPath(), pr.deps.hostsFor(pod, pr.ip)); err != nil {
		return err
	}
	_, err := rewriteInPlace(pr.resolvPath(), renderResolvConf(pr.deps.nameserver, pod.Namespace, pr.deps.domain))
	return err
}

// attachNetwork gives the pod its network namespace, once.
func (pr *podRuntime) attachNetwork() error {
	pod := pr.spec()
	pr.mu.Lock()
	done := pr.netns != nil
	pr.mu.Unlock()
	if done || pr.deps.network == nil || pod.Spec.HostNetwork {
		return nil
	}
	ns, err := pr.deps.network.attach(net.ParseIP(pr.ip))
	if err != nil {
		return err
	}
	pr.mu.Lock()
	pr.netns = ns
	pr.mu.Unlock()
	return nil
}

// network returns the pod's network namespace (nil when it shares the node's).
func (pr *podRuntime) network() *podNetNS {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.netns
}

// releaseNetwork removes the pod's veth pair and lets its namespace go;
// call it once the pod's processes are gone.
func (pr *podRuntime) releaseNetwork() {
	pr.mu.Lock()
	ns := pr.netns
	pr.netns = nil
	pr.mu.Unlock()
	ns.close()
}

// refreshHosts rewrites the pod's hosts file if the cluster's names changed.
func (pr *podRuntime) refreshHosts() {
	pr.mu.Lock()
	ready := pr.sandboxReady
	pod := pr.pod
	pr.mu.Unlock()
	if !ready {
		return
	}
	if _, err := rewriteInPlace(pr.hostsPath(), pr.deps.hostsFor(pod, pr.ip)); err != nil {
		pr.deps.log.Error("Failed to update hosts file", "pod", pr.key, "err", err)
	}
}

// refreshVolumes keeps ConfigMap, Secret, downward-API and token volumes
// current, as the kubelet's periodic sync does.
func (pr *podRuntime) refreshVolumes(ctx context.Context) {
	t := time.NewTicker(pr.deps.resync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := pr.volumes.setup(ctx); err != nil && ctx.Err() == nil {
				pr.deps.log.Info("Volume refresh failed", "pod", pr.key, "err", err)
			}
		}
	}
}

// stop asks every container to stop within grace and returns a channel
// closed when the pod's processes are gone.
func (pr *podRuntime) stop(grace time.Duration) <-chan struct{} {
	pr.mu.Lock()
	if !pr.terminating || grace < pr.grace {
		pr.grace = grace
	}
	pr.terminating = true
	pr.mu.Unlock()
	pr.cancel()
	return pr.done
}
