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

package resources

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/peer"
)

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := kairov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func testCluster() *kairov1alpha1.KairoCluster {
	return &kairov1alpha1.KairoCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "kairo", Namespace: "data", UID: "uid-1"},
		Spec: kairov1alpha1.KairoClusterSpec{
			Replicas: 3,
			Storage:  kairov1alpha1.StorageSpec{Size: resource.MustParse("10Gi")},
			Service:  kairov1alpha1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Port: 8080},
		},
	}
}

func testBuilder(t *testing.T, c *kairov1alpha1.KairoCluster) *Builder {
	return &Builder{Cluster: c, Scheme: testScheme(t), DefaultImage: "kairolog/broker:1.0",
		Replicas: c.Spec.Replicas, Voters: Voters(c.Spec.Replicas), DefaultReplication: DefaultReplication(c.Spec.Replicas)}
}

// build runs Build then Update, as creating a child does.
func build(t *testing.T, rb ResourceBuilder) client.Object {
	t.Helper()
	obj, err := rb.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := rb.Update(obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func checkOwnedAndLabelled(t *testing.T, obj client.Object) {
	t.Helper()
	refs := obj.GetOwnerReferences()
	if len(refs) != 1 || refs[0].Kind != "KairoCluster" || refs[0].Name != "kairo" || refs[0].UID != "uid-1" ||
		!ptr.Deref(refs[0].Controller, false) || !ptr.Deref(refs[0].BlockOwnerDeletion, false) {
		t.Errorf("%s: owner references %+v, want the KairoCluster as controller", obj.GetName(), refs)
	}
	want := map[string]string{
		"app.kubernetes.io/name": "kairolog", "app.kubernetes.io/instance": "kairo",
		"app.kubernetes.io/component": "broker", "app.kubernetes.io/managed-by": "kairolog-operator",
	}
	for k, v := range want {
		if obj.GetLabels()[k] != v {
			t.Errorf("%s: label %s=%q, want %q", obj.GetName(), k, obj.GetLabels()[k], v)
		}
	}
	if obj.GetNamespace() != "data" {
		t.Errorf("%s: namespace %q", obj.GetName(), obj.GetNamespace())
	}
}

func TestResourceBuildersOrder(t *testing.T) {
	c := testCluster()
	var kinds []string
	for _, rb := range testBuilder(t, c).ResourceBuilders() {
		kinds = append(kinds, reflect.TypeOf(build(t, rb)).Elem().Name()+"/"+build(t, rb).GetName())
	}
	want := []string{"ConfigMap/kairo-config", "Secret/kairo-peer-secret", "Service/kairo-headless", "Service/kairo", "StatefulSet/kairo", "PodDisruptionBudget/kairo", "NetworkPolicy/kairo"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("children %v, want %v", kinds, want)
	}

	c.Spec.PodDisruptionBudget = &kairov1alpha1.PodDisruptionBudgetSpec{Enabled: ptr.To(false)}
	if n := len(testBuilder(t, c).ResourceBuilders()); n != 6 {
		t.Errorf("a disabled budget is still built: %d children", n)
	}
	c.Spec.Security = &kairov1alpha1.SecuritySpec{NetworkPolicy: kairov1alpha1.NetworkPolicyDisabled}
	if n := len(testBuilder(t, c).ResourceBuilders()); n != 5 {
		t.Errorf("a disabled NetworkPolicy is still built: %d children", n)
	}
}

func TestConfigMap(t *testing.T) {
	c := testCluster()
	c.Spec.Config = map[string]string{"min.insync.replicas": "3", "log.retention.ms": "3600000"}
	cm := build(t, &ConfigMapBuilder{testBuilder(t, c)}).(*corev1.ConfigMap)
	checkOwnedAndLabelled(t, cm)
	if cm.Name != "kairo-config" {
		t.Errorf("name %q", cm.Name)
	}
	want := "# Written by the KairoLog operator from the KairoCluster's spec.config\n" +
		"# over the operator's defaults. Edits here are overwritten.\n" +
		"default.replication.factor=3\n" +
		"log.retention.ms=3600000\n" +
		"min.insync.replicas=3\n" + // spec.config wins over the default 2
		"offsets.topic.replication.factor=3\n"
	if got := cm.Data[PropertiesKey]; got != want {
		t.Errorf("broker.properties:\n%s\nwant:\n%s", got, want)
	}
}

// TestDefaultConfigFollowsTheClusterSize: a two-broker cluster runs one
// voter but still gives its topics two replicas.
func TestDefaultConfigFollowsTheClusterSize(t *testing.T) {
	for _, tc := range []struct {
		replicas int32
		rf       string
		minISR   string
	}{{1, "1", "1"}, {2, "2", "1"}, {3, "3", "2"}, {5, "3", "2"}} {
		cfg := DefaultConfig(DefaultReplication(tc.replicas))
		if cfg["default.replication.factor"] != tc.rf || cfg["min.insync.replicas"] != tc.minISR ||
			cfg["offsets.topic.replication.factor"] != tc.rf {
			t.Errorf("%d brokers: %v", tc.replicas, cfg)
		}
	}
}

func TestPropertiesEscaping(t *testing.T) {
	for in, want := range map[string]string{
		"plain":       "plain",
		"a=b:c#d!e":   "a=b:c#d!e",
		" lead":       `\ lead`,
		"back\\slash": `back\\slash`,
		"new\nline":   `new\nline`,
	} {
		if got := escapeProperty(in, false); got != want {
			t.Errorf("value %q escaped to %q, want %q", in, got, want)
		}
	}
	if got := escapeProperty("a=b c", true); got != `a\=b\ c` {
		t.Errorf("key escaped to %q", got)
	}
}

func TestHeadlessService(t *testing.T) {
	svc := build(t, &HeadlessServiceBuilder{testBuilder(t, testCluster())}).(*corev1.Service)
	checkOwnedAndLabelled(t, svc)
	if svc.Name != "kairo-headless" || svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses {
		t.Errorf("headless service %+v", svc.Spec)
	}
	if !reflect.DeepEqual(svc.Spec.Selector, SelectorLabels(testCluster())) {
		t.Errorf("selector %v", svc.Spec.Selector)
	}
	if got := portsOf(svc); !slices.Equal(got, []string{"http 8080→http", "raft 9093→raft", "peer 9094→peer", "kafka 9092→kafka"}) {
		t.Errorf("ports %v", got)
	}
}

// TestPeerSecret: the cluster secret is generated once, random and long
// enough for the broker to accept, and an existing one is never replaced
// (the running brokers hold it).
func TestPeerSecret(t *testing.T) {
	rb := &PeerSecretBuilder{testBuilder(t, testCluster())}
	s := build(t, rb).(*corev1.Secret)
	checkOwnedAndLabelled(t, s)
	if s.Name != "kairo-peer-secret" || s.Type != corev1.SecretTypeOpaque {
		t.Errorf("secret %s of type %s", s.Name, s.Type)
	}
	first := string(s.Data["secret"])
	if _, err := peer.NewSecret(first); err != nil {
		t.Fatalf("generated secret refused by the broker: %v", err)
	}
	if other := string(build(t, rb).(*corev1.Secret).Data["secret"]); other == first {
		t.Error("two clusters got the same secret")
	}
	if err := rb.Update(s); err != nil || string(s.Data["secret"]) != first {
		t.Errorf("an update replaced the secret (%v)", err)
	}
	s.Data["secret"] = []byte("short")
	if err := rb.Update(s); err != nil || len(s.Data["secret"]) != 64 {
		t.Errorf("an unusable secret was kept: %q (%v)", s.Data["secret"], err)
	}
}

// portsOf lists a Service's ports as "name port→target".
func portsOf(svc *corev1.Service) []string {
	var out []string
	for _, p := range svc.Spec.Ports {
		out = append(out, fmt.Sprintf("%s %d→%s", p.Name, p.Port, p.TargetPort.StrVal))
	}
	return out
}

// TestClientService: the client Service carries the HTTP API, the Kafka
// bootstrap port and the Kafka gateway, at the ports spec.service names.
func TestClientService(t *testing.T) {
	c := testCluster()
	c.Spec.Service = kairov1alpha1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Port: 9000, KafkaPort: 19092,
		Annotations: map[string]string{"lb.example.com/internal": "true"}}
	b := &ClientServiceBuilder{testBuilder(t, c)}
	svc := build(t, b).(*corev1.Service)
	checkOwnedAndLabelled(t, svc)
	if svc.Name != "kairo" || svc.Spec.Type != corev1.ServiceTypeNodePort || svc.Spec.PublishNotReadyAddresses ||
		svc.Annotations["lb.example.com/internal"] != "true" {
		t.Errorf("client service %+v", svc)
	}
	if got := portsOf(svc); !slices.Equal(got, []string{"http 9000→http", "kafka 19092→kafka", "kafka-gateway 9095→kafka-gateway"}) {
		t.Errorf("ports %v", got)
	}
	if got := KafkaBootstrap(c); got != "kairo.data.svc:19092" {
		t.Errorf("Kafka bootstrap %q", got)
	}

	// The node port Kubernetes allocated survives an update; a ClusterIP
	// Service has none.
	svc.Spec.Ports[0].NodePort = 31234
	svc.Spec.ClusterIP = "10.0.0.7"
	if err := b.Update(svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Ports[0].NodePort != 31234 || svc.Spec.ClusterIP != "10.0.0.7" {
		t.Errorf("update lost allocated fields: %+v", svc.Spec)
	}
	c.Spec.Service.Type = corev1.ServiceTypeClusterIP
	if err := b.Update(svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Ports[0].NodePort != 0 {
		t.Errorf("ClusterIP service keeps node port %d", svc.Spec.Ports[0].NodePort)
	}
}

func TestPodDisruptionBudget(t *testing.T) {
	c := testCluster()
	pdb := build(t, &PodDisruptionBudgetBuilder{testBuilder(t, c)}).(*policyv1.PodDisruptionBudget)
	checkOwnedAndLabelled(t, pdb)
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
		t.Errorf("budget %+v, want maxUnavailable 1", pdb.Spec)
	}
	if !reflect.DeepEqual(pdb.Spec.Selector.MatchLabels, SelectorLabels(c)) {
		t.Errorf("selector %v", pdb.Spec.Selector)
	}
}

// statefulSet builds the StatefulSet of c as a new object.
func statefulSet(t *testing.T, b *Builder) *appsv1.StatefulSet {
	t.Helper()
	return build(t, &StatefulSetBuilder{b}).(*appsv1.StatefulSet)
}
