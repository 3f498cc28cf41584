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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/api"
	brokerclient "github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/controllers/resources"
	"github.com/kairolog/kairolog/internal/brokertest"
)

// Two brokers that both vote, as a cluster created by an earlier operator
// runs: the quorum stops whenever either restarts. The operator runs it on
// one voter and says what that one survives. Before, two voters stayed
// two, and nothing said so.
var _ = Describe("KairoCluster controller on two real brokers", Ordered, func() {
	const ns = kcNamespacePrefix + "two"
	key := types.NamespacedName{Namespace: ns, Name: "kairo"}
	var (
		brokers *brokertest.Cluster
		node    *brokertest.Node
		svc     *brokerclient.Client
	)

	BeforeAll(func() {
		requireControllerManager()
		kcNamespace(ns)
		brokers, node = runOnBrokers(&kairov1alpha1.KairoCluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name},
			Spec:       kairov1alpha1.KairoClusterSpec{Replicas: 2, Storage: kairov1alpha1.StorageSpec{Size: resource.MustParse("1Gi")}},
		}, brokertest.Options{Brokers: 2, Voters: 2})
		svc = brokers.ServiceClient()
	})

	It("gives a new two-broker cluster one voter and two replicas per topic", func() {
		Eventually(func(g Gomega) {
			sts := &appsv1.StatefulSet{}
			g.Expect(k8sClient.Get(ctx, key, sts)).To(Succeed())
			g.Expect(sts.Annotations).To(HaveKeyWithValue(resources.VotersAnnotation, "1"))
			g.Expect(sts.Annotations).To(HaveKeyWithValue(resources.DefaultReplicationAnnotation, "2"))
			g.Expect(sts.Spec.Template.Spec.Containers[0].Args).To(ContainElement(
				"--initial-voters=0@kairo-0.kairo-headless.kc-two.svc:9093"))
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "kairo-config"}, cm)).To(Succeed())
			g.Expect(cm.Data[resources.PropertiesKey]).To(ContainSubstring("default.replication.factor=2\n"))
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})

	It("runs a two-voter quorum on one voter, and says what one voter survives", func() {
		Eventually(func(g Gomega) {
			b, err := svc.Broker(ctx, 1)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(b.Voter).To(BeFalse(), "broker 1 still votes")
			g.Expect(b.State).To(Equal(api.BrokerAlive))
			b, err = svc.Broker(ctx, 0)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(b.Voter).To(BeTrue())
			kc := getCluster(key)
			c := condition(kc.Status.Conditions, kairov1alpha1.ConditionQuorumFaultTolerant)
			g.Expect(c).To(haveCondition(metav1.ConditionFalse, ReasonOneVoter))
			g.Expect(c.Message).To(ContainSubstring("one voter, broker 0: while it restarts or is down"))
			g.Expect(c.ObservedGeneration).To(Equal(kc.Generation))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).WithTimeout(90 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		Eventually(func(g Gomega) {
			var reduced, warned bool
			for _, e := range eventsAbout(key.Namespace, "KairoCluster", key.Name) {
				reduced = reduced || e.Reason == ReasonQuorumReduced && e.Type == corev1.EventTypeNormal
				warned = warned || e.Reason == ReasonOneVoter && e.Type == corev1.EventTypeWarning
			}
			g.Expect(reduced).To(BeTrue(), "no %s event", ReasonQuorumReduced)
			g.Expect(warned).To(BeTrue(), "no Warning event %s", ReasonOneVoter)
		}).WithTimeout(10 * time.Second).Should(Succeed())

		By("the quorum going on while broker 1, now a non-voter, is down")
		Expect(node.Fail(1)).To(Succeed())
		DeferCleanup(node.Recover, 1)
		_, err := svc.CreateTopic(ctx, api.CreateTopicRequest{Name: "while-one-is-down", Partitions: 1, ReplicationFactor: 1})
		Expect(err).NotTo(HaveOccurred(), "with two voters the quorum would have stopped")
	})
})
