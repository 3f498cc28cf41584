package brokertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PropertiesKey is the ConfigMap key a Node reads a pod's broker
// properties from.
const PropertiesKey = "broker.properties"

// PeerSecretKey is the Secret key a Node reads a pod's cluster secret from.
const PeerSecretKey = "secret"

// Node runs the brokers of one StatefulSet's pods, as a kubelet would: the
// pod with ordinal i runs broker i of Cluster.
//
//   - A new pod (a new UID for an ordinal) starts its broker, with the
//     properties of the first ConfigMap volume of the pod that has a
//     broker.properties key, then the Cluster's Options.Config, and with
//     the cluster secret of the first Secret volume that has a "secret"
//     key (the operator's peer Secret), as a kubelet would mount it.
//   - A broker that exits by itself is started again (restartPolicy Always).
//   - A deleted pod's broker is stopped with SIGTERM; when the StatefulSet
//     controller recreates the pod, the broker starts again on its data.
//   - Each pod's phase and Ready condition follow its broker's /ready.
//
// It binds no volume claims: kube-controller-manager's PersistentVolume
// controller and a provisioner (localcluster.RunProvisioner) do, as on a
// cluster.
//
// Fail and Recover make one ordinal's machine fail and come back.
type Node struct {
	// Client talks to the API server (an uncached client is best).
	Client client.Client
	// Cluster runs the brokers; a pod whose ordinal has no slot yet grows it.
	Cluster *Cluster
	// Namespace of the pods.
	Namespace string
	// Selector picks the pods: the StatefulSet's selector labels.
	Selector map[string]string
	// ClientSecurity gives each broker its pod's client-listener security
	// flags (ClientSecurityFlags) and the certificate files of the pod's
	// projected Secret volume, written to a directory as a kubelet would
	// mount them. TLS between brokers stays off: the brokers' addresses
	// here are not the names their certificates carry.
	ClientSecurity bool
	// Interval between two passes. Default 200 ms.
	Interval time.Duration
	// Logf, when set, reports what the node does.
	Logf func(format string, args ...any)

	mu      sync.Mutex
	slots   map[int]*slot
	cancel  context.CancelFunc
	stopped chan struct{}
	busy    sync.WaitGroup
}

// slot is what the node knows of one ordinal.
type slot struct {
	uid     types.UID // pod the running broker belongs to
	busy    bool      // a start or stop is in flight
	failed  bool
	started time.Time
}

// Start runs the node until ctx ends or Stop is called.
func (n *Node) Start(ctx context.Context) {
	if n.Interval == 0 {
		n.Interval = 200 * time.Millisecond
	}
	n.mu.Lock()
	if n.slots == nil {
		n.slots = map[int]*slot{}
	}
	n.mu.Unlock()
	ctx, n.cancel = context.WithCancel(ctx)
	n.stopped = make(chan struct{})
	go func() {
		defer close(n.stopped)
		t := time.NewTicker(n.Interval)
		defer t.Stop()
		for {
			if err := n.pass(ctx); err != nil && ctx.Err() == nil {
				n.logf("node pass failed: %v", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Stop ends the node's loop and waits for starts and stops in flight. The
// brokers keep running; Cluster.Close stops them.
func (n *Node) Stop() {
	if n.cancel == nil {
		return
	}
	n.cancel()
	<-n.stopped
	n.busy.Wait()
}

// Fail kills broker i, as a lost machine would, and runs no broker for
// ordinal i until Recover. Its pod turns NotReady.
func (n *Node) Fail(i int) error {
	n.mu.Lock()
	s := n.slot(i)
	s.failed = true
	n.mu.Unlock()
	n.logf("failing broker %d", i)
	if i < n.Cluster.Len() {
		return n.Cluster.Kill(i)
	}
	return nil
}

// Recover lets ordinal i run its broker again; the next pass starts it.
func (n *Node) Recover(i int) {
	n.mu.Lock()
	s := n.slot(i)
	s.failed = false
	s.uid = "" // start afresh for the current pod
	n.mu.Unlock()
	n.logf("recovering broker %d", i)
}

func (n *Node) slot(i int) *slot {
	if n.slots == nil {
		n.slots = map[int]*slot{}
	}
	s := n.slots[i]
	if s == nil {
		s = &slot{}
		n.slots[i] = s
	}
	return s
}

func (n *Node) logf(format string, args ...any) {
	if n.Logf != nil {
		n.Logf(format, args...)
	}
}

var podOrdinal = regexp.MustCompile(`-(\d+)$`)

// Ordinal is the StatefulSet ordinal at the end of a pod name, or -1.
func Ordinal(podName string) int {
	m := podOrdinal.FindStringSubmatch(podName)
	if m == nil {
		return -1
	}
	i, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return i
}

func (n *Node) pass(ctx context.Context) error {
	var pods corev1.PodList
	if err := n.Client.List(ctx, &pods, client.InNamespace(n.Namespace), client.MatchingLabels(n.Selector)); err != nil {
		return err
	}
	live := map[int]*corev1.Pod{}
	maxOrdinal := -1
	for k := range pods.Items {
		pod := &pods.Items[k]
		i := Ordinal(pod.Name)
		if i < 0 || pod.DeletionTimestamp != nil {
			continue
		}
		live[i] = pod
		maxOrdinal = max(maxOrdinal, i)
	}
	if maxOrdinal >= 0 {
		if _, err := n.Cluster.Grow(maxOrdinal + 1); err != nil {
			return err
		}
	}

	n.mu.Lock()
	for i, pod := range live {
		s := n.slot(i)
		if s.busy || s.failed {
			continue
		}
		running := n.Cluster.Running(i)
		switch {
		case s.uid != pod.UID:
			n.converge(ctx, i, s, pod, running)
		case !running && time.Since(s.started) > 2*time.Second:
			n.logf("broker %d exited; starting it again", i)
			n.converge(ctx, i, s, pod, false)
		}
	}
	for i, s := range n.slots {
		if _, ok := live[i]; ok || s.busy || s.uid == "" {
			continue
		}
		s.uid, s.busy = "", true
		n.busy.Add(1)
		go func() {
			defer n.busy.Done()
			n.logf("pod of broker %d deleted; stopping the broker", i)
			if err := n.Cluster.Stop(i); err != nil {
				n.logf("%v", err)
			}
			n.mu.Lock()
			s.busy = false
			n.mu.Unlock()
		}()
	}
	n.mu.Unlock()

	for i, pod := range live {
		if err := n.updatePodStatus(ctx, i, pod); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// converge stops whatever runs for ordinal i and starts its broker for pod,
// in the background; n.mu is held.
func (n *Node) converge(ctx context.Context, i int, s *slot, pod *corev1.Pod, running bool) {
	s.busy = true
	n.busy.Add(1)
	go func() {
		defer n.busy.Done()
		if running {
			n.logf("broker %d runs for an older pod; stopping it", i)
			if err := n.Cluster.Stop(i); err != nil {
				n.logf("%v", err)
			}
		}
		props, err := n.podProperties(ctx, pod)
		if err != nil {
			n.logf("broker %d: reading its ConfigMap: %v", i, err)
		}
		if secret, err := n.podSecret(ctx, pod); err != nil {
			n.logf("broker %d: reading its Secret: %v", i, err)
		} else if secret != nil {
			if err := n.Cluster.SetSecret(secret); err != nil {
				n.logf("broker %d: %v", i, err)
			}
		}
		var args []string
		if n.ClientSecurity {
			if args, err = n.podSecurityArgs(ctx, i, pod); err != nil {
				n.logf("broker %d: its security flags: %v", i, err)
			}
		}
		n.logf("starting broker %d for pod %s (uid %s) %v", i, pod.Name, pod.UID, args)
		err = n.Cluster.StartWithArgs(i, props, args)
		n.mu.Lock()
		defer n.mu.Unlock()
		s.busy = false
		if err != nil {
			n.logf("%v", err)
			return
		}
		s.uid, s.started = pod.UID, time.Now()
	}()
}

// podProperties is the broker.properties of the pod's first ConfigMap
// volume that has one.
func (n *Node) podProperties(ctx context.Context, pod *corev1.Pod) ([]byte, error) {
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		var cm corev1.ConfigMap
		if err := n.Client.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: v.ConfigMap.Name}, &cm); err != nil {
			return nil, err
		}
		if p, ok := cm.Data[PropertiesKey]; ok {
			return []byte(p), nil
		}
	}
	return nil, nil
}

// ClientSecurityFlags are the flags of a pod's broker container that
// ClientSecurity passes on.
var ClientSecurityFlags = []string{"--http-tls", "--http-authentication", "--kafka-tls", "--kafka-authentication",
	"--kafka-gateway-tls", "--kafka-gateway-authentication", "--authorization", "--super-users"}

// podSecurityArgs writes the files of the pod's projected Secret volumes
// into a directory of broker i and returns the pod's client-listener
// security flags, with --tls-* flags naming those files.
func (n *Node) podSecurityArgs(ctx context.Context, i int, pod *corev1.Pod) ([]string, error) {
	if len(pod.Spec.Containers) == 0 {
		return nil, nil
	}
	var out []string
	for _, a := range pod.Spec.Containers[0].Args {
		for _, f := range ClientSecurityFlags {
			if a == f || strings.HasPrefix(a, f+"=") {
				out = append(out, a)
			}
		}
	}
	dir := filepath.Join(n.Cluster.dir, fmt.Sprintf("broker-%d-tls", i))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	files := 0
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.Secret == nil {
				continue
			}
			var s corev1.Secret
			if err := n.Client.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: src.Secret.Name}, &s); err != nil {
				return nil, err
			}
			paths := map[string]string{}
			for k := range s.Data {
				paths[k] = k
			}
			if len(src.Secret.Items) > 0 {
				paths = map[string]string{}
				for _, it := range src.Secret.Items {
					paths[it.Key] = it.Path
				}
			}
			for k, path := range paths {
				if err := os.WriteFile(filepath.Join(dir, path), s.Data[k], 0o600); err != nil {
					return nil, err
				}
				files++
			}
		}
	}
	if files == 0 {
		return out, nil
	}
	return append(out,
		"--tls-cert-file="+filepath.Join(dir, pod.Name+".crt"),
		"--tls-key-file="+filepath.Join(dir, pod.Name+".key"),
		"--tls-ca-file="+filepath.Join(dir, "ca.crt"),
		"--peer-tls=off"), nil
}

// podSecret is the cluster secret of the pod's first Secret volume that
// has one.
func (n *Node) podSecret(ctx context.Context, pod *corev1.Pod) ([]byte, error) {
	for _, v := range pod.Spec.Volumes {
		if v.Secret == nil {
			continue
		}
		var s corev1.Secret
		if err := n.Client.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: v.Secret.SecretName}, &s); err != nil {
			return nil, err
		}
		if b, ok := s.Data[PeerSecretKey]; ok {
			return b, nil
		}
	}
	return nil, nil
}

// updatePodStatus reports the broker's state as the pod's phase and
// readiness, writing only when they change.
func (n *Node) updatePodStatus(ctx context.Context, i int, pod *corev1.Pod) error {
	n.mu.Lock()
	s := n.slot(i)
	ran := s.uid == pod.UID // a broker was started for this pod
	failed := s.failed
	n.mu.Unlock()
	started := ran && !failed && n.Cluster.Running(i)
	ready := started && n.Cluster.Ready(i)

	// Like a kubelet, the pod stays Running while its container restarts.
	phase := pod.Status.Phase
	if ran {
		phase = corev1.PodRunning
	} else if phase == "" {
		phase = corev1.PodPending
	}
	want := corev1.ConditionFalse
	if ready {
		want = corev1.ConditionTrue
	}
	if pod.Status.Phase == phase && podCondition(pod, corev1.PodReady) == want && containerRunning(pod) == started {
		return nil
	}
	now := metav1.Now()
	pod = pod.DeepCopy()
	pod.Status.Phase = phase
	if pod.Status.StartTime == nil && started {
		pod.Status.StartTime = &now
	}
	setPodCondition(pod, corev1.PodInitialized, corev1.ConditionTrue, now)
	setPodCondition(pod, corev1.ContainersReady, want, now)
	setPodCondition(pod, corev1.PodReady, want, now)
	setContainerStatus(pod, started, ready, now)
	n.logf("pod %s: phase %s, ready %s, running %v", pod.Name, phase, want, started)
	return n.Client.Status().Update(ctx, pod)
}

// containerRunning reports whether the pod's status shows its first
// container running.
func containerRunning(pod *corev1.Pod) bool {
	return len(pod.Status.ContainerStatuses) > 0 && pod.Status.ContainerStatuses[0].State.Running != nil
}

// setContainerStatus reports the broker process as the pod's first
// container, as a kubelet would: running (ready or not) while the broker
// runs, waiting otherwise.
func setContainerStatus(pod *corev1.Pod, running, ready bool, now metav1.Time) {
	if len(pod.Spec.Containers) == 0 {
		return
	}
	cs := corev1.ContainerStatus{Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image, Ready: ready}
	if running {
		started := now
		if containerRunning(pod) {
			started = pod.Status.ContainerStatuses[0].State.Running.StartedAt
		}
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: started}
		cs.Started = &running
	} else {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

func setPodCondition(pod *corev1.Pod, t corev1.PodConditionType, status corev1.ConditionStatus, now metav1.Time) {
	for k := range pod.Status.Conditions {
		c := &pod.Status.Conditions[k]
		if c.Type == t {
			if c.Status != status {
				c.Status, c.LastTransitionTime = status, now
			}
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: t, Status: status, LastTransitionTime: now})
}
