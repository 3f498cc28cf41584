/*
Copyright 2026 The KairoLog Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controllers

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	brokerclient "github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/controllers/resources"
	"github.com/kairolog/kairolog/internal/brokertest"
)

// The KairoCluster specs run in namespaces with this prefix; the suite's
// KairoCluster reconciler looks at no other, so the Topic and ConsumerGroup
// specs' clusters (endpoints only, no pods) are left to their own tests.
const kcNamespacePrefix = "kc-"

// kcIdleWindowEnv makes the idle-load spec last this long (for example
// "2m") and run the reconciler with the manager's default resync interval,
// for the figures the operator documents. By default the window is short
// and the resync fast, to keep the suite quick.
const kcIdleWindowEnv = "KAIROLOG_IDLE_WINDOW"

var (
	kcResync     = 5 * time.Second
	kcIdleWindow = 15 * time.Second
	// kcPasses counts the KairoCluster reconciler's passes per cluster.
	kcPasses = &passCounter{counts: map[types.NamespacedName]int{}}
	// kcBrokerCalls records the KairoCluster reconciler's broker API calls.
	kcBrokerCalls = &requestLog{}
)

func init() {
	if w := os.Getenv(kcIdleWindowEnv); w != "" {
		d, err := time.ParseDuration(w)
		if err != nil {
			panic(fmt.Sprintf("%s=%q: %v", kcIdleWindowEnv, w, err))
		}
		kcIdleWindow, kcResync = d, DefaultResyncInterval
	}
	reconcilerSetups = append(reconcilerSetups, func(mgr ctrl.Manager) error {
		brokers := &ServiceBrokerClients{Timeout: 3 * time.Second, Reader: mgr.GetClient()}
		brokers.once.Do(func() {
			brokers.http = &http.Client{Transport: kcBrokerCalls.wrap(brokerclient.NewTransport())}
		})
		r := &KairoClusterReconciler{
			Client:           mgr.GetClient(),
			APIReader:        mgr.GetAPIReader(),
			Scheme:           mgr.GetScheme(),
			Brokers:          brokers,
			DefaultImage:     "kairolog/broker:test",
			ResyncInterval:   kcResync,
			ProgressInterval: time.Second,
		}
		return r.controllerBuilder(mgr).
			WithEventFilter(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return strings.HasPrefix(o.GetNamespace(), kcNamespacePrefix)
			})).
			Complete(&countingReconciler{inner: r, counts: kcPasses})
	})
}

// countingReconciler counts passes per cluster around the real reconciler.
type countingReconciler struct {
	inner  reconcile.Reconciler
	counts *passCounter
}

func (c *countingReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	c.counts.add(req.NamespacedName)
	return c.inner.Reconcile(ctx, req)
}

type passCounter struct {
	mu     sync.Mutex
	counts map[types.NamespacedName]int
}

func (p *passCounter) add(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[key]++
}

func (p *passCounter) of(key types.NamespacedName) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[key]
}

// runOnBrokers starts the broker processes opts asks for and a
// brokertest.Node that runs them as kc's pods, points the operator at them
// (the endpoint-override annotation), and creates kc. The node and the
// brokers stop when the enclosing container ends.
func runOnBrokers(kc *kairov1alpha1.KairoCluster, opts brokertest.Options) (*brokertest.Cluster, *brokertest.Node) {
	GinkgoHelper()
	brokers, err := brokertest.NewCluster(opts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(brokers.Close)
	if kc.Annotations == nil {
		kc.Annotations = map[string]string{}
	}
	kc.Annotations[kairov1alpha1.EndpointOverrideAnnotation] = brokers.ServiceURL()
	node := &brokertest.Node{Client: k8sClient, Cluster: brokers, Namespace: kc.Namespace,
		Selector: resources.SelectorLabels(kc),
		Logf:     func(format string, args ...any) { fmt.Fprintf(GinkgoWriter, "node: "+format+"\n", args...) }}
	node.Start(ctx)
	DeferCleanup(node.Stop)
	Expect(k8sClient.Create(ctx, kc)).To(Succeed())
	return brokers, node
}

// kcNamespace creates a namespace for KairoCluster specs.
func kcNamespace(name string) {
	GinkgoHelper()
	Expect(strings.HasPrefix(name, kcNamespacePrefix)).To(BeTrue())
	ensureNamespace(name)
}

func getCluster(key types.NamespacedName) *kairov1alpha1.KairoCluster {
	GinkgoHelper()
	return get(&kairov1alpha1.KairoCluster{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}})
}

// updateCluster applies change to the stored cluster.
func updateCluster(key types.NamespacedName, change func(*kairov1alpha1.KairoCluster)) {
	GinkgoHelper()
	Expect(update(&kairov1alpha1.KairoCluster{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}},
		change)).To(Succeed())
}

// eventReasons are the reasons of the events about a cluster, oldest first.
func eventReasons(key types.NamespacedName) []string {
	return reasons(eventsAbout(key.Namespace, "KairoCluster", key.Name))
}

// clusterPods are the broker pods of a cluster by ordinal, read from the
// API server.
func clusterPods(kc *kairov1alpha1.KairoCluster) map[int32]corev1.Pod {
	GinkgoHelper()
	var list corev1.PodList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(kc.Namespace),
		client.MatchingLabels(resources.SelectorLabels(kc)))).To(Succeed())
	out := map[int32]corev1.Pod{}
	for _, p := range list.Items {
		if id, ok := ordinal(kc, p.Name, ""); ok && p.DeletionTimestamp.IsZero() {
			out[id] = p
		}
	}
	return out
}

// podMonitor samples a cluster's pods and brokers to see how many brokers
// are down at once and in which order pods are replaced. A broker is down
// when its pod is missing or terminating or the broker itself does not
// serve (brokertest: stopping, stopped, or not ready since it started).
// Pods not ready are counted apart: the node reports readiness a little
// later than the broker changes it.
type podMonitor struct {
	kc       *kairov1alpha1.KairoCluster
	replicas int32
	serving  func(id int32) bool
	stop     chan struct{}
	done     chan struct{}

	mu          sync.Mutex
	maxDown     int
	downAt      string // the sample with the most brokers down
	maxNotReady int
	replaced    []int32
}

func startPodMonitor(kc *kairov1alpha1.KairoCluster, replicas int32, serving func(id int32) bool) *podMonitor {
	m := &podMonitor{kc: kc, replicas: replicas, serving: serving, stop: make(chan struct{}), done: make(chan struct{})}
	uids := map[int32]types.UID{}
	for id, p := range clusterPods(kc) {
		uids[id] = p.UID
	}
	go func() {
		defer GinkgoRecover()
		defer close(m.done)
		for {
			select {
			case <-m.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			var list corev1.PodList
			if err := k8sClient.List(ctx, &list, client.InNamespace(kc.Namespace),
				client.MatchingLabels(resources.SelectorLabels(kc))); err != nil {
				continue
			}
			pods := map[int32]*corev1.Pod{}
			for i := range list.Items {
				if id, ok := ordinal(kc, list.Items[i].Name, ""); ok {
					pods[id] = &list.Items[i]
				}
			}
			var down []string
			notReady := 0
			m.mu.Lock()
			for id := int32(0); id < m.replicas; id++ {
				p := pods[id]
				if p == nil || !p.DeletionTimestamp.IsZero() || !m.serving(id) {
					down = append(down, fmt.Sprint(id))
				}
				if p == nil || !podReady(p) {
					notReady++
				}
				if p != nil && uids[id] != "" && p.UID != uids[id] {
					m.replaced = append(m.replaced, id)
				}
				if p != nil {
					uids[id] = p.UID
				}
			}
			if len(down) > m.maxDown {
				m.maxDown, m.downAt = len(down), strings.Join(down, ",")
			}
			m.maxNotReady = max(m.maxNotReady, notReady)
			m.mu.Unlock()
		}
	}()
	return m
}

// monitorResult is what a podMonitor saw.
type monitorResult struct {
	maxDown     int
	downAt      string
	maxNotReady int
	replaced    []int32
}

// finish stops sampling and returns what the monitor saw.
func (m *podMonitor) finish() monitorResult {
	close(m.stop)
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return monitorResult{maxDown: m.maxDown, downAt: m.downAt, maxNotReady: m.maxNotReady, replaced: slices.Clone(m.replaced)}
}
