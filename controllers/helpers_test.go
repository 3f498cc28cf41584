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

// helpers_test.go holds the helpers every envtest suite of this package
// shares: reading and changing objects, conditions, events, and the request
// logs that let a spec assert how much load the reconcilers make.

import (
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kairolog/kairolog/internal/heldport"
)

// uniqueName gives every spec its own object so specs stay independent.
func uniqueName(prefix string) string {
	return prefix + "-" + rand.String(6)
}

// ensureNamespace creates a namespace if it does not exist.
func ensureNamespace(name string) {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, ns))).To(Succeed())
}

// create creates obj and returns it.
func create[T client.Object](obj T) T {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, obj)).To(Succeed())
	return obj
}

// get reads obj (its namespace and name set) from the API server.
func get[T client.Object](obj T) T {
	GinkgoHelper()
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	return obj
}

// update applies change to the stored obj (its namespace and name set) and
// writes it, reading again when a reconciler wrote in between; it returns
// the API server's answer, so a spec can expect a refusal.
func update[T client.Object](obj T, change func(T)) error {
	var err error
	for range 10 {
		if err = k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change(obj)
		if err = k8sClient.Update(ctx, obj); !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}

// eventually waits until check passes on the stored obj (its namespace and
// name set), reading it every 100 ms, and returns it.
func eventually[T client.Object](obj T, timeout time.Duration, check func(g Gomega, obj T)) T {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		check(g, obj)
	}).WithTimeout(timeout).WithPolling(100 * time.Millisecond).Should(Succeed())
	return obj
}

// expectGone waits until obj no longer exists.
func expectGone(obj client.Object, timeout time.Duration) {
	GinkgoHelper()
	Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj))
	}).WithTimeout(timeout).Should(BeTrue(), "%T %s still exists", obj, obj.GetName())
}

// condition returns the condition of type t, or an empty one.
func condition(conds []metav1.Condition, t string) metav1.Condition {
	if c := meta.FindStatusCondition(conds, t); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// haveCondition matches a condition with this status and reason.
func haveCondition(status metav1.ConditionStatus, reason string) OmegaMatcher {
	return And(HaveField("Status", status), HaveField("Reason", reason))
}

// eventsAbout lists the events of a namespace about the objects of kind
// named name, oldest first; an empty kind or name matches any.
func eventsAbout(namespace, kind, name string) []eventsv1.Event {
	GinkgoHelper()
	var list eventsv1.EventList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(namespace))).To(Succeed())
	var out []eventsv1.Event
	for _, e := range list.Items {
		if (kind == "" || e.Regarding.Kind == kind) && (name == "" || e.Regarding.Name == name) {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].EventTime.Before(&out[j].EventTime) })
	return out
}

// reasons are the reasons of events, in order.
func reasons(events []eventsv1.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Reason)
	}
	return out
}

// expectEvent waits for an event with reason about the named object.
func expectEvent(namespace, name, reason string) eventsv1.Event {
	GinkgoHelper()
	var found eventsv1.Event
	Eventually(func(g Gomega) {
		events := eventsAbout(namespace, "", name)
		for _, e := range events {
			if e.Reason == reason {
				found = e
				return
			}
		}
		g.Expect(reasons(events)).To(ContainElement(reason), "events about %s/%s", namespace, name)
	}).WithTimeout(20 * time.Second).Should(Succeed())
	return found
}

// closedPorts hold the ports of closedEndpoint for the rest of the run:
// bound, not listening, so every connection is refused and no other socket
// can take the port.
var closedPorts struct {
	sync.Mutex
	held []*heldport.Bound
}

// closedEndpoint is an http:// address nothing listens on, now or later.
func closedEndpoint() string {
	GinkgoHelper()
	b, err := heldport.Bind("127.0.0.1")
	Expect(err).NotTo(HaveOccurred())
	closedPorts.Lock()
	closedPorts.held = append(closedPorts.held, b)
	closedPorts.Unlock()
	return "http://" + b.Addr()
}

// logFigure prints a measured figure in the Ginkgo report and the spec's
// output, and on stdout for the scale measurement.
func logFigure(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	AddReportEntry("figure", msg)
	fmt.Fprintln(GinkgoWriter, msg)
	if os.Getenv(scaleTestEnv) != "" {
		fmt.Println(msg)
	}
}

// requestLog records the HTTP requests that pass through it: the suite's
// manager to the API server, the reconcilers to the brokers.
type requestLog struct {
	mu       sync.Mutex
	requests []loggedRequest
}

type loggedRequest struct {
	method, host, path string
	// took is how long the request took; zero while it is in flight.
	took time.Duration
}

// wrap records every request through rt, as it is sent.
func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		l.mu.Lock()
		i := len(l.requests)
		l.requests = append(l.requests, loggedRequest{method: req.Method, host: req.URL.Host, path: req.URL.Path})
		l.mu.Unlock()
		start := time.Now()
		resp, err := rt.RoundTrip(req)
		l.mu.Lock()
		l.requests[i].took = time.Since(start)
		l.mu.Unlock()
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// mark is a position in the log to count from.
func (l *requestLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.requests)
}

// count counts the requests since mark that match.
func (l *requestLog) count(mark int, match func(loggedRequest) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.requests[mark:] {
		if match(r) {
			n++
		}
	}
	return n
}

// list lists the requests since mark that match, as "METHOD path".
func (l *requestLog) list(mark int, match func(loggedRequest) bool) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.requests[mark:] {
		if match(r) {
			out = append(out, r.method+" "+r.path)
		}
	}
	return out
}

// meanLatency is the mean latency per method of the finished requests that match.
func (l *requestLog) meanLatency(match func(loggedRequest) bool) map[string]time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	sum, n := map[string]time.Duration{}, map[string]int64{}
	for _, r := range l.requests {
		if r.took > 0 && match(r) {
			sum[r.method] += r.took
			n[r.method]++
		}
	}
	out := map[string]time.Duration{}
	for m, d := range sum {
		out[m] = (d / time.Duration(n[m])).Round(100 * time.Microsecond)
	}
	return out
}

// toHost matches the requests to host ("127.0.0.1:8080", or an http:// URL).
func toHost(host string) func(loggedRequest) bool {
	host = strings.TrimPrefix(strings.TrimPrefix(host, "http://"), "https://")
	return func(r loggedRequest) bool { return r.host == host }
}

// toPath matches the requests to host with exactly this path.
func toPath(host, path string) func(loggedRequest) bool {
	return func(r loggedRequest) bool { return toHost(host)(r) && r.path == path }
}

// underPath matches the requests to host whose path starts with prefix.
func underPath(host, prefix string) func(loggedRequest) bool {
	return func(r loggedRequest) bool { return toHost(host)(r) && strings.HasPrefix(r.path, prefix) }
}

// inNamespace matches API requests to the objects of namespace.
func inNamespace(namespace string) func(loggedRequest) bool {
	return func(r loggedRequest) bool { return strings.Contains(r.path, "/namespaces/"+namespace+"/") }
}

// isWrite matches the API requests that change something (every method but GET).
func isWrite(r loggedRequest) bool { return r.method != http.MethodGet }

// writesTo matches the writes to one kairolog.io object of resource
// ("topics") and to its status.
func writesTo(resource string, key types.NamespacedName) func(loggedRequest) bool {
	path := "/apis/kairolog.io/v1alpha1/namespaces/" + key.Namespace + "/" + resource + "/" + key.Name
	return func(r loggedRequest) bool { return isWrite(r) && (r.path == path || r.path == path+"/status") }
}

// isObjectOf matches the requests to one kairolog.io object of resource
// ("topics"), or to its status.
func isObjectOf(resource string) func(loggedRequest) bool {
	return func(r loggedRequest) bool {
		return strings.HasPrefix(r.path, "/apis/kairolog.io/") && strings.Contains(r.path, "/"+resource+"/")
	}
}

// statusWrites matches the writes to the status of the kairolog.io objects
// of resource; otherWrites the other writes to them (finalizers).
func statusWrites(resource string) func(loggedRequest) bool {
	return all(isWrite, isObjectOf(resource), func(r loggedRequest) bool { return strings.HasSuffix(r.path, "/status") })
}

func otherWrites(resource string) func(loggedRequest) bool {
	return all(isWrite, isObjectOf(resource), func(r loggedRequest) bool { return !strings.HasSuffix(r.path, "/status") })
}

// all matches the requests every one of matchers matches.
func all(matchers ...func(loggedRequest) bool) func(loggedRequest) bool {
	return func(r loggedRequest) bool {
		for _, m := range matchers {
			if !m(r) {
				return false
			}
		}
		return true
	}
}

// isRead matches the API requests that read (GET: cache lists and watches,
// direct reads).
func isRead(r loggedRequest) bool { return r.method == http.MethodGet }
