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
// every broker request is logged (brokerCalls), as every request of the
// manager to the API server is (managerCalls), so a spec can assert how
// much load the reconcilers make.

import (
	"net/http"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	brokerclient "github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/config"
	"github.com/kairolog/kairolog/internal/brokertest"
)

// scaleTestEnv turns on the 1000-Topic measurement; the reconcilers then
// resync on the production default instead of the short test interval.
const scaleTestEnv = "KAIRO_SCALE_TEST"

var (
	// testResync is the reconcilers' resync interval in this suite.
	testResync = 2 * time.Second
	// brokerCalls records every request the reconcilers send to a broker.
	brokerCalls = &requestLog{}
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
		brokers := &ServiceBrokerClients{Reader: mgr.GetClient()}
		brokers.once.Do(func() { brokers.http = &http.Client{Transport: brokerCalls.wrap(brokerclient.NewTransport())} })
		if err := (&TopicReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Brokers: brokers,
			ResyncInterval: testResync, MaxConcurrentReconciles: topicWorkers}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&ConsumerGroupReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Brokers: brokers,
			ResyncInterval: testResync}).SetupWithManager(mgr)
	})
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
	*brokertest.InProcessBroker
	url  string
	host string
}

// testBrokerSettings are quick to start and remove stale group members
// within a second of their session timeout.
func testBrokerSettings() config.Settings {
	s := config.DefaultSettings()
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
	s := testBrokerSettings()
	var out []*testBroker
	for _, b := range brokertest.StartInProcess(GinkgoT(), brokertest.InProcessOptions{Brokers: n, Settings: &s}) {
		out = append(out, &testBroker{InProcessBroker: b, url: b.URL, host: b.Address})
	}
	return out
}

// client is a broker client for the spec's own requests (not counted).
func (tb *testBroker) client() *brokerclient.Client { return tb.Client() }

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
			expectGone(o, 20*time.Second)
		}
	})
}
