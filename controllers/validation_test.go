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
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kairolog/kairolog/broker/topicconfig"
)

// validationNamespace holds the objects of the validation specs.
const validationNamespace = "validation"

// parseObject turns a manifest into an unstructured object in the validation
// namespace. Unstructured lets a spec send values the Go types cannot hold
// (a string where a number belongs, an unparsable quantity).
func parseObject(manifest string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal([]byte(manifest), &obj.Object)).To(Succeed())
	obj.SetNamespace(validationNamespace)
	return obj
}

func clusterManifest(name, specExtra string) string {
	return fmt.Sprintf(`
apiVersion: kairolog.io/v1alpha1
kind: KairoCluster
metadata:
  name: %s
spec:
  replicas: 3
  storage:
    size: 10Gi
%s`, name, specExtra)
}

func topicManifest(name, specExtra string) string {
	return fmt.Sprintf(`
apiVersion: kairolog.io/v1alpha1
kind: Topic
metadata:
  name: %s
spec:
  clusterRef:
    name: kairo
%s`, name, specExtra)
}

func groupManifest(name, specExtra string) string {
	return fmt.Sprintf(`
apiVersion: kairolog.io/v1alpha1
kind: ConsumerGroup
metadata:
  name: %s
spec:
  clusterRef:
    name: kairo
%s`, name, specExtra)
}

// expectRejected asserts the API server refused a request as invalid, with a
// message that names what was wrong.
func expectRejected(err error, mentions ...string) {
	ExpectWithOffset(1, err).To(HaveOccurred(), "the API server accepted an invalid object")
	ExpectWithOffset(1, apierrors.IsInvalid(err)).To(BeTrue(), "expected 422 Invalid, got %v", err)
	for _, m := range mentions {
		ExpectWithOffset(1, err.Error()).To(ContainSubstring(m))
	}
}

var _ = Describe("API validation", Ordered, ContinueOnFailure, func() {
	BeforeAll(func() {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: validationNamespace}}
		Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, ns))).To(Succeed())
	})

	It("accepts every sample in config/samples", func() {
		files, err := filepath.Glob(filepath.Join("..", "config", "samples", "kairolog_*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(files).To(HaveLen(3))
		for _, f := range files {
			data, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			obj := parseObject(string(data))
			Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "sample %s", f)
			Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
		}
	})

	// The Topic CRD's config rules are generated from the brokers' table
	// of topic config keys; this asks the real API server about the
	// values on either side of every bound and checks it answers as the
	// brokers' own check does. Before the rules came from the table, the
	// API server took segment.bytes, segment.ms and flush.messages of "0",
	// which the brokers refuse.
	It("agrees with the brokers on every topic config value", func() {
		type probe struct{ key, value string }
		var probes []probe
		for _, k := range topicconfig.Keys {
			values := []string{"0", "-1", "x", "1.5", ""}
			switch k.Kind {
			case topicconfig.Int:
				values = append(values, strconv.FormatInt(k.Min, 10), strconv.FormatInt(k.Min-1, 10),
					strconv.FormatInt(k.Max, 10), "-2")
				if k.Max < math.MaxInt64 {
					values = append(values, strconv.FormatInt(k.Max+1, 10))
				}
			case topicconfig.Enum:
				values = append(values, k.Values...)
				values = append(values, strings.ToUpper(k.Values[0]))
			}
			for _, v := range values {
				probes = append(probes, probe{k.Name, v})
			}
		}
		probes = append(probes, probe{"retention.days", "7"})
		for _, p := range probes {
			topic := parseObject(topicManifest(uniqueName("config"), ""))
			Expect(unstructured.SetNestedStringMap(topic.Object, map[string]string{p.key: p.value}, "spec", "config")).To(Succeed())
			apiErr := k8sClient.Create(ctx, topic, client.DryRunAll)
			brokerErr := topicconfig.Validate(map[string]string{p.key: p.value})
			if brokerErr == nil {
				Expect(apiErr).NotTo(HaveOccurred(), "%s=%q: the brokers accept it, the API server refused it", p.key, p.value)
			} else {
				Expect(apiErr).To(HaveOccurred(), "%s=%q: the brokers refuse it (%v), the API server accepted it", p.key, p.value, brokerErr)
				Expect(apierrors.IsInvalid(apiErr)).To(BeTrue(), "%s=%q: %v", p.key, p.value, apiErr)
			}
		}
		By(fmt.Sprintf("%d values of %d keys asked", len(probes), len(topicconfig.Keys)))
	})

	It("fills in the defaults", func() {
		name := uniqueName("defaults")
		topic := parseObject(topicManifest(name, ""))
		Expect(k8sClient.Create(ctx, topic)).To(Succeed())
		partitions, _, _ := unstructured.NestedInt64(topic.Object, "spec", "partitions")
		policy, _, _ := unstructured.NestedString(topic.Object, "spec", "deletionPolicy")
		Expect(partitions).To(BeEquivalentTo(1))
		Expect(policy).To(Equal("Delete"))

		group := parseObject(groupManifest(name, ""))
		Expect(k8sClient.Create(ctx, group)).To(Succeed())
		strategy, _, _ := unstructured.NestedString(group.Object, "spec", "assignmentStrategy")
		groupPolicy, _, _ := unstructured.NestedString(group.Object, "spec", "deletionPolicy")
		Expect(strategy).To(Equal("range"))
		Expect(groupPolicy).To(Equal("Retain"))

		cluster := parseObject(clusterManifest(name, "  replicas: null\n"))
		Expect(k8sClient.Create(ctx, cluster)).To(Succeed())
		replicas, _, _ := unstructured.NestedInt64(cluster.Object, "spec", "replicas")
		port, _, _ := unstructured.NestedInt64(cluster.Object, "spec", "service", "port")
		Expect(replicas).To(BeEquivalentTo(3))
		Expect(port).To(BeEquivalentTo(8080))
	})

	DescribeTable("rejects an invalid new object",
		func(manifest func(name string) string, mentions ...string) {
			err := k8sClient.Create(ctx, parseObject(manifest(uniqueName("invalid"))))
			expectRejected(err, mentions...)
		},
		// KairoCluster
		Entry("cluster with 0 replicas", func(n string) string {
			return clusterManifest(n, "  replicas: 0\n")
		}, "spec.replicas"),
		Entry("cluster without storage", func(n string) string {
			return fmt.Sprintf("apiVersion: kairolog.io/v1alpha1\nkind: KairoCluster\nmetadata:\n  name: %s\nspec:\n  replicas: 3\n", n)
		}, "spec.storage"),
		Entry("cluster with a negative storage size", func(n string) string {
			return strings.Replace(clusterManifest(n, ""), "10Gi", "-1Gi", 1)
		}, "spec.storage.size", "storage size must be positive"),
		Entry("cluster with a storage size that is not a quantity", func(n string) string {
			return strings.Replace(clusterManifest(n, ""), "10Gi", "lots", 1)
		}, "spec.storage.size"),
		Entry("cluster with an unknown service type", func(n string) string {
			return clusterManifest(n, "  service:\n    type: Bogus\n")
		}, "spec.service.type"),
		Entry("cluster with a service port out of range", func(n string) string {
			return clusterManifest(n, "  service:\n    port: 70000\n")
		}, "spec.service.port"),
		Entry("cluster with an unknown image pull policy", func(n string) string {
			return clusterManifest(n, "  imagePullPolicy: Sometimes\n")
		}, "spec.imagePullPolicy"),
		Entry("cluster config key that is not a dotted name", func(n string) string {
			return clusterManifest(n, "  config:\n    Log Retention: \"1\"\n")
		}, "spec.config", "lower-case dotted names"),
		Entry("cluster config setting a key the operator owns", func(n string) string {
			return clusterManifest(n, "  config:\n    broker.id: \"7\"\n")
		}, "spec.config", "set by the operator"),
		Entry("cluster with a malformed PDB maxUnavailable", func(n string) string {
			return clusterManifest(n, "  podDisruptionBudget:\n    maxUnavailable: half\n")
		}, "spec.podDisruptionBudget.maxUnavailable"),
		Entry("cluster with an unknown claim retention", func(n string) string {
			return strings.Replace(clusterManifest(n, ""), "size: 10Gi", "size: 10Gi\n    retentionPolicy:\n      whenDeleted: Keep", 1)
		}, "spec.storage.retentionPolicy.whenDeleted"),
		Entry("cluster with an empty rack topology key", func(n string) string {
			return clusterManifest(n, "  rack:\n    topologyKey: \"\"\n")
		}, "spec.rack.topologyKey"),
		Entry("cluster with more than 100 brokers", func(n string) string {
			return strings.Replace(clusterManifest(n, ""), "replicas: 3", "replicas: 101", 1)
		}, "spec.replicas"),
		Entry("cluster with service port 0", func(n string) string {
			return clusterManifest(n, "  service:\n    port: 0\n")
		}, "spec.service.port"),
		Entry("cluster with an unknown claim retention on scale down", func(n string) string {
			return strings.Replace(clusterManifest(n, ""), "size: 10Gi", "size: 10Gi\n    retentionPolicy:\n      whenScaled: Keep", 1)
		}, "spec.storage.retentionPolicy.whenScaled"),
		Entry("cluster config with more than 100 settings", func(n string) string {
			var b strings.Builder
			b.WriteString("  config:\n")
			for i := 0; i < 101; i++ {
				fmt.Fprintf(&b, "    setting.%d: \"1\"\n", i)
			}
			return clusterManifest(n, b.String())
		}, "spec.config"),
		Entry("cluster with a termination grace period too short for a clean shutdown", func(n string) string {
			return clusterManifest(n, "  podTemplate:\n    terminationGracePeriodSeconds: 1\n")
		}, "spec.podTemplate.terminationGracePeriodSeconds"),

		// Topic
		Entry("topic with 0 partitions", func(n string) string {
			return topicManifest(n, "  partitions: 0\n")
		}, "spec.partitions"),
		Entry("topic with partitions given as text", func(n string) string {
			return topicManifest(n, "  partitions: four\n")
		}, "spec.partitions"),
		Entry("topic with 0 replicas", func(n string) string {
			return topicManifest(n, "  replicas: 0\n")
		}, "spec.replicas"),
		Entry("topic without clusterRef", func(n string) string {
			return fmt.Sprintf("apiVersion: kairolog.io/v1alpha1\nkind: Topic\nmetadata:\n  name: %s\nspec:\n  partitions: 1\n", n)
		}, "spec.clusterRef"),
		Entry("topic whose clusterRef is not a resource name", func(n string) string {
			return strings.Replace(topicManifest(n, ""), "name: kairo", "name: Kairo_X", 1)
		}, "spec.clusterRef.name"),
		Entry("topic name with illegal characters", func(n string) string {
			return topicManifest(n, "  topicName: \"orders!\"\n")
		}, "spec.topicName"),
		Entry("topic name reserved for internal topics", func(n string) string {
			return topicManifest(n, "  topicName: __consumer_offsets\n")
		}, "spec.topicName", "reserved for internal topics"),
		Entry("topic with an unknown deletion policy", func(n string) string {
			return topicManifest(n, "  deletionPolicy: Keep\n")
		}, "spec.deletionPolicy"),
		Entry("topic config with an unknown key", func(n string) string {
			return topicManifest(n, "  config:\n    retention.days: \"7\"\n")
		}, "spec.config", "supported keys"),
		Entry("topic config retention.ms that is not a number", func(n string) string {
			return topicManifest(n, "  config:\n    retention.ms: 7d\n")
		}, "spec.config", "retention.ms"),
		Entry("topic config asking for compaction", func(n string) string {
			return topicManifest(n, "  config:\n    cleanup.policy: compact\n")
		}, "spec.config", "cleanup.policy supports only delete"),
		Entry("topic config with min.insync.replicas above replicas", func(n string) string {
			return topicManifest(n, "  replicas: 2\n  config:\n    min.insync.replicas: \"3\"\n")
		}, "spec", "min.insync.replicas cannot exceed replicas"),
		Entry("topic with more than 10000 partitions", func(n string) string {
			return topicManifest(n, "  partitions: 10001\n")
		}, "spec.partitions"),
		Entry("topic with more than 100 replicas", func(n string) string {
			return topicManifest(n, "  replicas: 101\n")
		}, "spec.replicas"),
		Entry("topic name of a single dot", func(n string) string {
			return topicManifest(n, "  topicName: \".\"\n")
		}, "spec.topicName"),
		Entry("topic config segment.bytes with a unit", func(n string) string {
			return topicManifest(n, "  config:\n    segment.bytes: 1GB\n")
		}, "spec.config", "segment.bytes is an integer from 1048576 to 2147483647"),
		Entry("topic config unclean.leader.election.enable that is not a boolean", func(n string) string {
			return topicManifest(n, "  config:\n    unclean.leader.election.enable: \"yes\"\n")
		}, "spec.config", "true or false"),
		Entry("topic config with min.insync.replicas of 0", func(n string) string {
			return topicManifest(n, "  config:\n    min.insync.replicas: \"0\"\n")
		}, "spec.config", "min.insync.replicas is an integer from 1"),

		// ConsumerGroup
		Entry("group with an unknown assignment strategy", func(n string) string {
			return groupManifest(n, "  assignmentStrategy: sticky\n")
		}, "spec.assignmentStrategy"),
		Entry("group id with illegal characters", func(n string) string {
			return groupManifest(n, "  groupId: \"my group\"\n")
		}, "spec.groupId"),
		Entry("group topic with illegal characters", func(n string) string {
			return groupManifest(n, "  topics: [\"bad topic\"]\n")
		}, "spec.topics[0]"),
		Entry("group session timeout of 0s", func(n string) string {
			return groupManifest(n, "  sessionTimeout: 0s\n")
		}, "spec.sessionTimeout", "between 1s and 1h"),
		Entry("group with an unknown deletion policy", func(n string) string {
			return groupManifest(n, "  deletionPolicy: Forget\n")
		}, "spec.deletionPolicy"),
		Entry("group whose clusterRef is not a resource name", func(n string) string {
			return strings.Replace(groupManifest(n, ""), "name: kairo", "name: Kairo_X", 1)
		}, "spec.clusterRef.name"),
		Entry("offset reset of a topic with illegal characters", func(n string) string {
			return groupManifest(n, "  offsetReset:\n    requestId: r1\n    to: earliest\n    topics: [\"bad topic\"]\n")
		}, "spec.offsetReset.topics[0]"),
		Entry("offset reset to earliest with a stray timestamp", func(n string) string {
			return groupManifest(n, "  offsetReset:\n    requestId: r1\n    to: earliest\n    timestamp: \"2026-01-01T00:00:00Z\"\n")
		}, "spec.offsetReset", "timestamp is only allowed when to is timestamp"),
		Entry("offset reset to an unknown target", func(n string) string {
			return groupManifest(n, "  offsetReset:\n    requestId: r1\n    to: beginning\n")
		}, "spec.offsetReset.to"),
		Entry("offset reset without a request id", func(n string) string {
			return groupManifest(n, "  offsetReset:\n    requestId: \"\"\n    to: earliest\n")
		}, "spec.offsetReset.requestId"),
		Entry("offset reset to an offset without the offset", func(n string) string {
			return groupManifest(n, "  offsetReset:\n    requestId: r1\n    to: offset\n")
		}, "spec.offsetReset", "offset is required when to is offset"),
		Entry("offset reset to a negative offset", func(n string) string {
			return groupManifest(n, "  offsetReset:\n    requestId: r1\n    to: offset\n    offset: -5\n")
		}, "spec.offsetReset.offset"),
		Entry("offset reset to a timestamp without the timestamp", func(n string) string {
			return groupManifest(n, "  offsetReset:\n    requestId: r1\n    to: timestamp\n")
		}, "spec.offsetReset", "timestamp is required when to is timestamp"),
		Entry("offset reset to earliest with a stray offset", func(n string) string {
			return groupManifest(n, "  offsetReset:\n    requestId: r1\n    to: earliest\n    offset: 3\n")
		}, "spec.offsetReset", "offset is only allowed when to is offset"),
	)

	// An update spec creates the object, then applies change to it; an update
	// without mentions means the update must be accepted (the control that shows the
	// rule is not simply rejecting everything).
	type update struct {
		manifest func(name string) string
		change   func(obj *unstructured.Unstructured)
		mentions []string
	}
	set := func(value any, path ...string) func(*unstructured.Unstructured) {
		return func(obj *unstructured.Unstructured) {
			Expect(unstructured.SetNestedField(obj.Object, value, path...)).To(Succeed())
		}
	}
	DescribeTable("checks updates",
		func(u update) {
			obj := parseObject(u.manifest(uniqueName("update")))
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			// Reconcilers running in the suite may update the object (a
			// finalizer, status) between create and update: apply the change
			// to the latest version.
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
				u.change(obj)
				return k8sClient.Update(ctx, obj)
			})
			if len(u.mentions) == 0 {
				Expect(err).NotTo(HaveOccurred())
				return
			}
			expectRejected(err, u.mentions...)
		},
		Entry("topic partitions decrease is refused", update{
			manifest: func(n string) string { return topicManifest(n, "  partitions: 4\n") },
			change:   set(int64(2), "spec", "partitions"),
			mentions: []string{"spec.partitions", "partitions cannot be decreased"},
		}),
		Entry("topic partitions increase is accepted", update{
			manifest: func(n string) string { return topicManifest(n, "  partitions: 4\n") },
			change:   set(int64(8), "spec", "partitions"),
		}),
		Entry("topic clusterRef change is refused", update{
			manifest: func(n string) string { return topicManifest(n, "") },
			change:   set("other", "spec", "clusterRef", "name"),
			mentions: []string{"spec.clusterRef", "clusterRef is immutable"},
		}),
		Entry("topic topicName change is refused", update{
			manifest: func(n string) string { return topicManifest(n, "  topicName: orders\n") },
			change:   set("payments", "spec", "topicName"),
			mentions: []string{"spec.topicName is immutable once set"},
		}),
		Entry("topic topicName removal is refused", update{
			manifest: func(n string) string { return topicManifest(n, "  topicName: orders\n") },
			change:   func(obj *unstructured.Unstructured) { unstructured.RemoveNestedField(obj.Object, "spec", "topicName") },
			mentions: []string{"spec.topicName is immutable once set"},
		}),
		Entry("topic topicName set later to another name is refused", update{
			manifest: func(n string) string { return topicManifest(n, "") },
			change:   set("payments", "spec", "topicName"),
			mentions: []string{"spec.topicName can only be set to the resource name"},
		}),
		Entry("topic topicName set later to the resource name is accepted", update{
			manifest: func(n string) string { return topicManifest(n, "") },
			change: func(obj *unstructured.Unstructured) {
				Expect(unstructured.SetNestedField(obj.Object, obj.GetName(), "spec", "topicName")).To(Succeed())
			},
		}),
		Entry("group groupId change is refused", update{
			manifest: func(n string) string { return groupManifest(n, "  groupId: workers\n") },
			change:   set("others", "spec", "groupId"),
			mentions: []string{"spec.groupId is immutable once set"},
		}),
		Entry("group groupId set later to another name is refused", update{
			manifest: func(n string) string { return groupManifest(n, "") },
			change:   set("others", "spec", "groupId"),
			mentions: []string{"spec.groupId can only be set to the resource name"},
		}),
		Entry("group groupId set later to the resource name is accepted", update{
			manifest: func(n string) string { return groupManifest(n, "") },
			change: func(obj *unstructured.Unstructured) {
				Expect(unstructured.SetNestedField(obj.Object, obj.GetName(), "spec", "groupId")).To(Succeed())
			},
		}),
		Entry("group clusterRef change is refused", update{
			manifest: func(n string) string { return groupManifest(n, "") },
			change:   set("other", "spec", "clusterRef", "name"),
			mentions: []string{"spec.clusterRef", "clusterRef is immutable"},
		}),
		Entry("cluster storage shrink is refused", update{
			manifest: func(n string) string { return clusterManifest(n, "") },
			change:   set("5Gi", "spec", "storage", "size"),
			mentions: []string{"spec.storage.size", "storage size cannot shrink"},
		}),
		Entry("cluster storage growth is accepted", update{
			manifest: func(n string) string { return clusterManifest(n, "") },
			change:   set("20Gi", "spec", "storage", "size"),
		}),
		Entry("cluster storageClassName change is refused", update{
			manifest: func(n string) string {
				return strings.Replace(clusterManifest(n, ""), "size: 10Gi", "size: 10Gi\n    storageClassName: fast", 1)
			},
			change:   set("slow", "spec", "storage", "storageClassName"),
			mentions: []string{"spec.storage.storageClassName", "storageClassName is immutable"},
		}),
	)
})
