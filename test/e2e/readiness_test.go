package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// readinessMonitor watches the broker pods continuously and records every
// change of the set of brokers that are down, with timestamps. A broker is
// down when its pod does not exist, is terminating, or is not Ready: the
// strictest reading of "down" a client could notice.
type readinessMonitor struct {
	names []string
	began time.Time

	mu          sync.Mutex
	armed       bool
	pods        map[string]*corev1.Pod
	initialUIDs map[string]string
	lastDown    string
	transitions []string
	maxDown     int
	maxDownAt   time.Time
	maxDownSet  []string

	stop chan struct{}
}

// watchReadiness starts watching the pods of a cluster's brokers, which
// must all be up; it records from then on.
func watchReadiness(ns, cluster string, replicas int) *readinessMonitor {
	GinkgoHelper()
	m := &readinessMonitor{began: time.Now(), pods: map[string]*corev1.Pod{}, initialUIDs: map[string]string{},
		stop: make(chan struct{})}
	for i := range replicas {
		m.names = append(m.names, fmt.Sprintf("%s-%d", cluster, i))
	}
	factory := informers.NewSharedInformerFactoryWithOptions(s.clientset, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = "app.kubernetes.io/instance=" + cluster + ",app.kubernetes.io/component=broker"
		}))
	inf := factory.Core().V1().Pods().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { m.observe(obj, false) },
		UpdateFunc: func(_, obj any) { m.observe(obj, false) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			m.observe(obj, true)
		},
	})
	if err != nil {
		panic(err)
	}
	factory.Start(m.stop)
	onCleanup(m.Stop)
	// Arm the monitor once it has seen every broker up: until then the
	// informer's initial list is still arriving one pod at a time.
	Eventually(func() []string {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.downLocked()
	}).WithTimeout(30*time.Second).WithPolling(100*time.Millisecond).Should(BeEmpty(), "brokers up before the monitor starts")
	m.mu.Lock()
	for name, p := range m.pods {
		m.initialUIDs[name] = string(p.UID)
	}
	m.armed = true
	m.began = time.Now()
	m.transitions = []string{"   0.00s  every broker ready → down: []"}
	m.mu.Unlock()
	return m
}

func (m *readinessMonitor) observe(obj any, deleted bool) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if deleted {
		if cur, ok := m.pods[pod.Name]; ok && cur.UID == pod.UID {
			delete(m.pods, pod.Name)
		}
	} else {
		m.pods[pod.Name] = pod
	}
	if !m.armed {
		return
	}
	down := m.downLocked()
	key := strings.Join(down, ",")
	if key == m.lastDown {
		return
	}
	m.lastDown = key
	now := time.Now()
	what := "ready"
	switch {
	case deleted:
		what = "deleted"
	case pod.DeletionTimestamp != nil:
		what = "terminating"
	case !podReady(pod):
		what = "not ready"
	}
	m.transitions = append(m.transitions, fmt.Sprintf("%7.2fs  %s (uid %.8s) %s → down: [%s]",
		now.Sub(m.began).Seconds(), pod.Name, pod.UID, what, key))
	if len(down) > m.maxDown {
		m.maxDown, m.maxDownAt, m.maxDownSet = len(down), now, down
	}
}

// downLocked lists the brokers that are down now.
func (m *readinessMonitor) downLocked() []string {
	var down []string
	for _, name := range m.names {
		p, ok := m.pods[name]
		if !ok || p.DeletionTimestamp != nil || !podReady(p) {
			down = append(down, name)
		}
	}
	sort.Strings(down)
	return down
}

// MaxDown is the largest number of brokers down at the same moment, when,
// and which.
func (m *readinessMonitor) MaxDown() (int, time.Time, []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.maxDown, m.maxDownAt, m.maxDownSet
}

// Replaced lists the pods whose UID is not the one they had when the
// monitor started: the pods that were deleted and created again.
func (m *readinessMonitor) Replaced() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, name := range m.names {
		if p, ok := m.pods[name]; ok && string(p.UID) != m.initialUIDs[name] {
			out = append(out, name)
		}
	}
	return out
}

// Transitions is the recorded timeline, one line per change.
func (m *readinessMonitor) Transitions() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.transitions, "\n")
}

func (m *readinessMonitor) Stop() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// conditionRecorder watches one KairoCluster and records every change of
// its conditions, so a scenario can tell that the operator noticed a fault
// (Ready went False) and not only that the status is Ready again.
type conditionRecorder struct {
	began time.Time

	mu      sync.Mutex
	last    map[string]string // type → "Status/Reason"
	changes []conditionChange
	cancel  func()
	done    chan struct{}
}

type conditionChange struct {
	At                   time.Time
	Type, Status, Reason string
	Message              string
}

func recordConditions(namespace, name string) *conditionRecorder {
	GinkgoHelper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &conditionRecorder{began: time.Now(), last: map[string]string{}, cancel: cancel, done: make(chan struct{})}
	w, err := s.watcher.Watch(ctx, &kairov1alpha1.KairoClusterList{}, client.InNamespace(namespace),
		client.MatchingFields{"metadata.name": name})
	Expect(err).NotTo(HaveOccurred())
	go func() {
		defer close(r.done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			kc, ok := ev.Object.(*kairov1alpha1.KairoCluster)
			if !ok {
				continue
			}
			r.observe(kc.Status.Conditions)
		}
	}()
	onCleanup(r.Stop)
	return r
}

func (r *conditionRecorder) observe(conds []metav1.Condition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range conds {
		key := string(c.Status) + "/" + c.Reason
		if r.last[c.Type] == key {
			continue
		}
		r.last[c.Type] = key
		r.changes = append(r.changes, conditionChange{At: time.Now(), Type: c.Type, Status: string(c.Status),
			Reason: c.Reason, Message: c.Message})
	}
}

// Saw reports whether a condition had this status after t; an empty
// reason matches any.
func (r *conditionRecorder) Saw(typ string, status metav1.ConditionStatus, reason string, after time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.changes {
		if c.Type == typ && c.Status == string(status) && (reason == "" || c.Reason == reason) && !c.At.Before(after) {
			return true
		}
	}
	return false
}

// Timeline lists the recorded changes, one per line.
func (r *conditionRecorder) Timeline() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, c := range r.changes {
		fmt.Fprintf(&b, "%7.2fs  %s=%s %s: %s\n", c.At.Sub(r.began).Seconds(), c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}

func (r *conditionRecorder) Stop() {
	r.cancel()
	<-r.done
}
