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

// The Topic and ConsumerGroup specs share this harness: real brokers run in
// the test process behind real HTTP listeners, the reconcilers reach them
// through ServiceBrokerClients and the endpoint-override annotation, and
// every broker request and every write to the API server is counted, so a
// spec can assert how much load the reconcilers make.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker"
	brokerclient "github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/cluster"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/server"
)

// scaleTestEnv turns on the 1000-Topic measurement; the reconcilers then
// resync on the production default instead of the short test interval.
const scaleTestEnv = "KAIRO_SCALE_TEST"

var (
	// testResync is the reconcilers' resync interval in this suite.
	testResync = 2 * time.Second
	// brokerCalls counts every request the reconcilers send to a broker.
	brokerCalls = newCountingTransport(brokerclient.NewTransport())
	// kubeWrites counts the reconcilers' writes to the API server.
	kubeWrites = newWriteCounts()
)

// topicWorkers is the Topic reconciler's concurrency in this suite (the
// product default unless KAIRO_TOPIC_WORKERS says otherwise).
var topicWorkers = 0

func init() {
	if os.Getenv(scaleTestEnv) != "" {
		testResync = DefaultResyncInterval
	}
	topicWorkers = envInt("KAIRO_TOPIC_WORKERS", 0)
	reconcilerSetups = append(reconcilerSetups, func(mgr ctrl.Manager) error {
		brokers := &ServiceBrokerClients{}
		brokers.once.Do(func() { brokers.http = &http.Client{Transport: brokerCalls} })
		c := countingClient{Client: mgr.GetClient(), counts: kubeWrites}
		if err := (&TopicReconciler{Client: c, Scheme: mgr.GetScheme(), Brokers: brokers,
			ResyncInterval: testResync, MaxConcurrentReconciles: topicWorkers}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&ConsumerGroupReconciler{Client: c, Scheme: mgr.GetScheme(), Brokers: brokers,
			ResyncInterval: testResync}).SetupWithManager(mgr)
	})
}

// countingTransport counts requests per host and per "host path", and
// sums their latency per method.
type countingTransport struct {
	next    http.RoundTripper
	total   atomic.Int64
	mu      sync.Mutex
	paths   map[string]int64
	hosts   map[string]int64
	latency map[string]time.Duration
	byVerb  map[string]int64
}

func newCountingTransport(next http.RoundTripper) *countingTransport {
	return &countingTransport{next: next, paths: map[string]int64{}, hosts: map[string]int64{},
		latency: map[string]time.Duration{}, byVerb: map[string]int64{}}
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.total.Add(1)
	t.mu.Lock()
	t.hosts[req.URL.Host]++
	t.paths[req.URL.Host+" "+req.URL.Path]++
	t.mu.Unlock()
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	t.mu.Lock()
	t.latency[req.Method] += time.Since(start)
	t.byVerb[req.Method]++
	t.mu.Unlock()
	return resp, err
}

// meanLatency is the mean latency of each method's requests so far.
func (t *countingTransport) meanLatency() map[string]time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]time.Duration{}
	for m, d := range t.latency {
		out[m] = (d / time.Duration(t.byVerb[m])).Round(100 * time.Microsecond)
	}
	return out
}

// host is how many requests went to host so far.
func (t *countingTransport) host(host string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.hosts[host]
}

// prefixed sums the requests to host whose path starts with prefix.
func (t *countingTransport) prefixed(host, prefix string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var n int64
	for k, v := range t.paths {
		if strings.HasPrefix(k, host+" "+prefix) {
			n += v
		}
	}
	return n
}

// path is how many requests went to host with exactly this path.
func (t *countingTransport) path(host, path string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.paths[host+" "+path]
}

// writeCounts counts writes per object, status and metadata apart, and
// sums their latency.
type writeCounts struct {
	status  atomic.Int64
	other   atomic.Int64
	elapsed atomic.Int64 // nanoseconds
	mu      sync.Mutex
	byObj   map[types.NamespacedName]int64
}

// meanLatency is the mean latency of the writes so far.
func (w *writeCounts) meanLatency() time.Duration {
	n := w.status.Load() + w.other.Load()
	if n == 0 {
		return 0
	}
	return (time.Duration(w.elapsed.Load()) / time.Duration(n)).Round(100 * time.Microsecond)
}

func (w *writeCounts) timed(start time.Time) { w.elapsed.Add(int64(time.Since(start))) }

func newWriteCounts() *writeCounts { return &writeCounts{byObj: map[types.NamespacedName]int64{}} }

func (w *writeCounts) add(obj client.Object, status bool) {
	if status {
		w.status.Add(1)
	} else {
		w.other.Add(1)
	}
	w.mu.Lock()
	w.byObj[client.ObjectKeyFromObject(obj)]++
	w.mu.Unlock()
}

// of is how many writes (status or not) obj has had.
func (w *writeCounts) of(key types.NamespacedName) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byObj[key]
}

// countingClient counts the reconcilers' writes to the API server.
type countingClient struct {
	client.Client
	counts *writeCounts
}

func (c countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.counts.add(obj, false)
	defer c.counts.timed(time.Now())
	return c.Client.Update(ctx, obj, opts...)
}

func (c countingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.counts.add(obj, false)
	defer c.counts.timed(time.Now())
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c countingClient) Status() client.SubResourceWriter {
	return countingStatus{SubResourceWriter: c.Client.Status(), counts: c.counts}
}

type countingStatus struct {
	client.SubResourceWriter
	counts *writeCounts
}

func (s countingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	s.counts.add(obj, true)
	defer s.counts.timed(time.Now())
	return s.SubResourceWriter.Update(ctx, obj, opts...)
}

func (s countingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.counts.add(obj, true)
	defer s.counts.timed(time.Now())
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// reconcileCount is how many reconciles the named controller has run, from
// controller-runtime's own metric.
func reconcileCount(controller string) float64 {
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	var n float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelValue(m, "controller") == controller {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// testBroker is one broker running in the test process.
type testBroker struct {
	id      int32
	b       *broker.Broker
	srv     *http.Server
	peerSrv *http.Server
	url     string
	host    string
	dataDir string
	cancel  context.CancelFunc
	runDone chan struct{}
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().String()
}

// testBrokerSettings are quick to start and remove stale group members
// within a second of their session timeout.
func testBrokerSettings() broker.Settings {
	s := broker.DefaultSettings()
	s.OffsetsTopicNumPartitions = 3
	s.OffsetsTopicReplicationFactor = 1
	s.GroupCleanupInterval = 500 * time.Millisecond
	return s
}

// startBrokers starts n brokers forming one cluster (every one a voter),
// waits until all are ready, and stops them when the enclosing container
// ends.
func startBrokers(n int) []*testBroker {
	GinkgoHelper()
	var voters []cluster.Voter
	raft := make([]string, n)
	for i := range n {
		raft[i] = freeAddr()
		if n > 1 {
			voters = append(voters, cluster.Voter{ID: i, Address: raft[i]})
		}
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	out := make([]*testBroker, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	secret := peer.GenerateSecret()
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		peerLn, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		dir, err := os.MkdirTemp("", "kairolog-controllers-broker-")
		Expect(err).NotTo(HaveOccurred())
		tb := &testBroker{id: int32(i), host: ln.Addr().String(), url: "http://" + ln.Addr().String(), dataDir: dir,
			runDone: make(chan struct{})}
		out[i] = tb
		wg.Add(1)
		go func() { // voters must start together to elect a leader
			defer wg.Done()
			s := testBrokerSettings()
			tb.b, errs[i] = broker.New(broker.Config{ID: int32(i), DataDir: dir, HTTPAdvertise: tb.host,
				PeerAdvertise: peerLn.Addr().String(), PeerSecret: secret,
				RaftListen: raft[i], InitialVoters: voters, Settings: s, Logger: quiet,
				RaftLogOutput: io.Discard, RaftLogLevel: "off"})
			if errs[i] != nil {
				ln.Close()
				peerLn.Close()
				return
			}
			public := server.New(tb.b, server.Options{Logger: quiet, MaxBodyBytes: s.MaxRequestBytes})
			tb.srv = &http.Server{Handler: public, ReadHeaderTimeout: 10 * time.Second}
			tb.peerSrv = &http.Server{Handler: tb.b.PeerHandler(public), ReadHeaderTimeout: 10 * time.Second}
			go func() { _ = tb.srv.Serve(ln) }()
			go func() { _ = tb.peerSrv.Serve(peerLn) }()
			var ctx context.Context
			ctx, tb.cancel = context.WithCancel(context.Background())
			go func() { _ = tb.b.Run(ctx); close(tb.runDone) }()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		Expect(err).NotTo(HaveOccurred())
	}
	DeferCleanup(func() {
		for _, tb := range out {
			tb.stop()
		}
	})
	for _, tb := range out {
		c := tb.client()
		Eventually(func() error { return c.Ready(context.Background()) }).
			WithTimeout(60 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	}
	return out
}

func (tb *testBroker) stop() {
	if tb.cancel == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = tb.b.ControlledShutdown(ctx)
	_ = tb.srv.Close()
	_ = tb.peerSrv.Close()
	tb.cancel()
	_ = tb.b.Close()
	<-tb.runDone
	tb.cancel = nil
	_ = os.RemoveAll(tb.dataDir)
}

// client is a broker client for the spec's own requests (not counted).
func (tb *testBroker) client() *brokerclient.Client {
	c, err := brokerclient.New(tb.url, brokerclient.WithTimeout(10*time.Second))
	Expect(err).NotTo(HaveOccurred())
	return c
}

// closedEndpoint is an address nothing listens on.
func closedEndpoint() string { return "http://" + freeAddr() }

// ensureNamespace creates a namespace if it does not exist.
func ensureNamespace(name string) {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, ns))).To(Succeed())
}

// createCluster creates a KairoCluster whose brokers the operator reaches at endpoint.
func createCluster(namespace, name, endpoint string) *kairov1alpha1.KairoCluster {
	GinkgoHelper()
	kc := &kairov1alpha1.KairoCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
			Annotations: map[string]string{kairov1alpha1.EndpointOverrideAnnotation: endpoint}},
	}
	kc.Spec.Replicas = 1
	kc.Spec.Storage.Size.Set(1 << 30)
	Expect(k8sClient.Create(ctx, kc)).To(Succeed())
	return kc
}

// cleanUpCluster deletes, when the enclosing container ends and before its
// brokers stop, a cluster and the Topics and ConsumerGroups on it, so that
// they do not keep retrying against stopped brokers for the rest of the
// suite. The cluster goes first: its resources then release their
// finalizers without asking the brokers.
func cleanUpCluster(kc *kairov1alpha1.KairoCluster) {
	DeferCleanup(func() {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, kc))).To(Succeed())
		var topics kairov1alpha1.TopicList
		Expect(k8sClient.List(ctx, &topics, client.InNamespace(kc.Namespace))).To(Succeed())
		var groups kairov1alpha1.ConsumerGroupList
		Expect(k8sClient.List(ctx, &groups, client.InNamespace(kc.Namespace))).To(Succeed())
		var objs []client.Object
		for i := range topics.Items {
			if topics.Items[i].Spec.ClusterRef.Name == kc.Name {
				objs = append(objs, &topics.Items[i])
			}
		}
		for i := range groups.Items {
			if groups.Items[i].Spec.ClusterRef.Name == kc.Name {
				objs = append(objs, &groups.Items[i])
			}
		}
		for _, o := range objs {
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, o))).To(Succeed())
		}
		for _, o := range objs {
			expectGone(o)
		}
	})
}

// readyCondition returns the Ready condition of conds, or an empty one.
func readyCondition(conds []metav1.Condition) metav1.Condition {
	if c := meta.FindStatusCondition(conds, kairov1alpha1.ConditionReady); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// haveReady matches a Ready condition with this status and reason.
func haveReady(status metav1.ConditionStatus, reason string) OmegaMatcher {
	return And(HaveField("Status", status), HaveField("Reason", reason))
}

// expectEvent waits for an event with reason about the named object.
func expectEvent(namespace, name, reason string) eventsv1.Event {
	GinkgoHelper()
	var found eventsv1.Event
	Eventually(func(g Gomega) {
		var list eventsv1.EventList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(namespace))).To(Succeed())
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Name == name {
				if e.Reason == reason {
					found = e
					return
				}
				seen = append(seen, e.Reason)
			}
		}
		g.Expect(seen).To(ContainElement(reason), "events about %s/%s", namespace, name)
	}).WithTimeout(20 * time.Second).Should(Succeed())
	return found
}

// expectGone waits until obj no longer exists.
func expectGone(obj client.Object) {
	GinkgoHelper()
	Eventually(func() bool {
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err)
	}).WithTimeout(20*time.Second).Should(BeTrue(), "%s still exists", obj.GetName())
}

// logFigure prints a measured figure so that it shows in `go test -v`
// output and in the Ginkgo report.
func logFigure(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	AddReportEntry("figure", msg)
	fmt.Fprintln(GinkgoWriter, msg)
	if os.Getenv(scaleTestEnv) != "" {
		fmt.Println(msg)
	}
}
