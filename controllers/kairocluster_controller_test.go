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
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/api"
	brokerclient "github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/controllers/resources"
	"github.com/kairolog/kairolog/internal/brokertest"
	"github.com/kairolog/kairolog/internal/localcluster"
)

var _ = Describe("KairoCluster controller on three real brokers", Ordered, func() {
	const ns = kcNamespacePrefix + "main"
	key := types.NamespacedName{Namespace: ns, Name: "kairo"}
	var (
		brokers *brokertest.Cluster
		node    *brokertest.Node
		svc     *brokerclient.Client
		// peerSecret is the cluster secret the operator generated.
		peerSecret string
	)

	BeforeAll(func() {
		requireControllerManager()
		kcNamespace(ns)
		Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, &storagev1.StorageClass{
			ObjectMeta:           metav1.ObjectMeta{Name: "kc-expandable"},
			Provisioner:          localcluster.ProvisionerName,
			AllowVolumeExpansion: ptr.To(true),
		}))).To(Succeed())

		brokers, node = runOnBrokers(&kairov1alpha1.KairoCluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name},
			Spec: kairov1alpha1.KairoClusterSpec{
				Replicas: 3,
				Storage: kairov1alpha1.StorageSpec{Size: resource.MustParse("1Gi"),
					StorageClassName: ptr.To("kc-expandable")},
				Config: map[string]string{"min.insync.replicas": "2"},
			},
		}, brokertest.Options{Brokers: 3})
		svc = brokers.ServiceClient()
	})

	It("creates its children, owned by the cluster, and the StatefulSet controller creates the pods", func() {
		kc := getCluster(key)
		children := []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kairo-config"}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "kairo-headless"}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "kairo"}},
			&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "kairo"}},
			&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "kairo"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kairo-peer-secret"}},
		}
		for _, child := range children {
			child.SetNamespace(ns)
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(child), child)).To(Succeed())
				g.Expect(metav1.IsControlledBy(child, kc)).To(BeTrue(), "%T %s is not controlled by the cluster", child, child.GetName())
				g.Expect(child.GetLabels()).To(HaveKeyWithValue(resources.LabelManagedBy, resources.ManagedBy))
			}).WithTimeout(20 * time.Second).Should(Succeed())
		}
		cm := children[0].(*corev1.ConfigMap)
		Expect(cm.Data[resources.PropertiesKey]).To(ContainSubstring("min.insync.replicas=2\n"))
		Expect(children[1].(*corev1.Service).Spec.PublishNotReadyAddresses).To(BeTrue())
		sts := children[3].(*appsv1.StatefulSet)
		Expect(sts.Spec.UpdateStrategy.Type).To(Equal(appsv1.OnDeleteStatefulSetStrategyType))
		Expect(sts.Spec.Template.Spec.Containers[0].Args).To(ContainElement(
			"--initial-voters=0@kairo-0.kairo-headless.kc-main.svc:9093,1@kairo-1.kairo-headless.kc-main.svc:9093,2@kairo-2.kairo-headless.kc-main.svc:9093"))
		Expect(sts.Spec.Template.Spec.Containers[0].Image).To(Equal("kairolog/broker:test"))

		By("the cluster secret: generated into a Secret, mounted into every pod, reached through the peer port")
		secret := children[5].(*corev1.Secret)
		Expect(secret.Data).To(HaveKeyWithValue(resources.PeerSecretKey, HaveLen(64)))
		peerSecret = string(secret.Data[resources.PeerSecretKey])
		pod := sts.Spec.Template.Spec
		Expect(pod.Volumes).To(ContainElement(SatisfyAll(
			HaveField("Name", resources.PeerSecretVolume),
			HaveField("VolumeSource.Secret.SecretName", "kairo-peer-secret"))))
		Expect(pod.Containers[0].VolumeMounts).To(ContainElement(SatisfyAll(
			HaveField("Name", resources.PeerSecretVolume), HaveField("MountPath", "/etc/kairolog-peer"), HaveField("ReadOnly", true))))
		Expect(pod.Containers[0].Args).To(ContainElements("--peer-listen=:9094", "--peer-secret-file=/etc/kairolog-peer/secret"))
		Expect(children[1].(*corev1.Service).Spec.Ports).To(ContainElement(SatisfyAll(
			HaveField("Name", "peer"), HaveField("Port", int32(9094)))))
		Expect(children[2].(*corev1.Service).Spec.Ports).NotTo(ContainElement(HaveField("Name", "peer")),
			"the client Service must not expose the peer listener")

		By("the real StatefulSet controller creating three pods and their claims")
		Eventually(func(g Gomega) {
			g.Expect(clusterPods(kc)).To(HaveLen(3))
			var claims corev1.PersistentVolumeClaimList
			g.Expect(k8sClient.List(ctx, &claims, client.InNamespace(ns))).To(Succeed())
			g.Expect(claims.Items).To(HaveLen(3))
			for _, c := range claims.Items {
				g.Expect(c.Status.Phase).To(Equal(corev1.ClaimBound))
			}
		}).WithTimeout(30 * time.Second).Should(Succeed())
		Eventually(func() []string { return eventReasons(key) }).WithTimeout(10 * time.Second).Should(ContainElement(ReasonCreated))
	})

	It("reports the real brokers in its status", func() {
		Eventually(func(g Gomega) {
			kc := getCluster(key)
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, ReasonClusterReady))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionProgressing)).To(haveCondition(metav1.ConditionFalse, ReasonUpToDate))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionDegraded)).To(haveCondition(metav1.ConditionFalse, ReasonAsExpected))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionQuorumFaultTolerant)).To(haveCondition(metav1.ConditionTrue, ReasonToleratesBrokerLoss))
		}).WithTimeout(90 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())

		_, err := svc.CreateTopic(ctx, api.CreateTopicRequest{Name: "orders", Partitions: 6, ReplicationFactor: 3})
		Expect(err).NotTo(HaveOccurred())
		By("the status following the brokers' own view after a resync")
		Eventually(func(g Gomega) {
			meta, err := svc.Metadata(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			kc := getCluster(key)
			g.Expect(kc.Status.ObservedGeneration).To(Equal(kc.Generation))
			g.Expect(kc.Status.Replicas).To(BeEquivalentTo(3))
			g.Expect(kc.Status.ReadyReplicas).To(BeEquivalentTo(3))
			g.Expect(kc.Status.ClientEndpoint).To(Equal("kairo.kc-main.svc:8080"))
			g.Expect(kc.Status.KafkaBootstrap).To(Equal("kairo.kc-main.svc:9092"))
			g.Expect(kc.Status.Selector).To(ContainSubstring("app.kubernetes.io/instance=kairo"))
			g.Expect(kc.Status.ControllerID).To(HaveValue(Equal(meta.ControllerID)))
			g.Expect(kc.Status.Brokers).To(HaveLen(len(meta.Brokers)))
			for i, b := range meta.Brokers {
				got := kc.Status.Brokers[i]
				g.Expect(got).To(Equal(kairov1alpha1.BrokerStatus{ID: b.ID, Pod: fmt.Sprintf("kairo-%d", b.ID), Ready: true,
					State: b.State, Partitions: int32(b.Partitions), Leaders: int32(b.Leaders), UnderReplicated: int32(b.UnderReplicated)}))
				g.Expect(got.Partitions).To(BeNumerically(">=", 6)) // orders and __consumer_offsets
			}
		}).WithTimeout(3 * kcResync).WithPolling(500 * time.Millisecond).Should(Succeed())
	})

	It("stays quiet while the cluster is idle", func() {
		By("waiting until the brokers have settled (leaders move back to preferred replicas after a start) and the status shows it")
		var last []api.BrokerInfo
		Eventually(func(g Gomega) {
			list, err := svc.Brokers(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			same := slices.Equal(list, last)
			last = list
			g.Expect(same).To(BeTrue())
			kc := getCluster(key)
			g.Expect(kc.Status.Brokers).To(HaveLen(len(list)))
			for i, b := range list {
				g.Expect(kc.Status.Brokers[i].Leaders).To(BeEquivalentTo(b.Leaders))
				g.Expect(kc.Status.Brokers[i].Partitions).To(BeEquivalentTo(b.Partitions))
			}
		}).WithTimeout(max(60*time.Second, 4*kcResync)).WithPolling(kcResync).Should(Succeed())
		kc := getCluster(key)
		Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		passes, mark, calls := kcPasses.of(key), managerCalls.mark(), len(kcBrokerCalls.list(0, toHost(brokers.ServiceURL())))
		rv := kc.ResourceVersion
		time.Sleep(kcIdleWindow)
		if after := getCluster(key); after.ResourceVersion != rv {
			fmt.Fprintf(GinkgoWriter, "Status before the idle window: %+v\nafter: %+v\n", kc.Status, after.Status)
		}
		passes = kcPasses.of(key) - passes
		writes := managerCalls.list(mark, all(isWrite, inNamespace(ns)))
		reads := managerCalls.count(mark, all(isRead, inNamespace(ns)))
		brokerCalls := kcBrokerCalls.list(0, toHost(brokers.ServiceURL()))[calls:]
		logFigure("Idle KairoCluster for %v (resync %v): %d reconciles, %d API writes %v, %d API reads, %d broker calls %v",
			kcIdleWindow, kcResync, passes, len(writes), writes, reads, len(brokerCalls), compact(brokerCalls))
		Expect(writes).To(BeEmpty())
		Expect(getCluster(key).ResourceVersion).To(Equal(rv))
		Expect(passes).To(BeNumerically("<=", int(kcIdleWindow/kcResync)+2))
		Expect(len(brokerCalls)).To(BeNumerically("<=", passes))
	})

	It("reports an unreachable broker API as Degraded, retrying with a bounded delay and without status churn", func() {
		live := brokers.ServiceURL()
		dead := closedEndpoint()
		updateCluster(key, func(kc *kairov1alpha1.KairoCluster) {
			kc.Annotations[kairov1alpha1.EndpointOverrideAnnotation] = dead
		})
		Eventually(func(g Gomega) {
			kc := getCluster(key)
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionDegraded)).To(haveCondition(metav1.ConditionTrue, ReasonBrokerUnreachable))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionDegraded).Message).To(ContainSubstring(strings.TrimPrefix(dead, "http://")))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonBrokerUnreachable))
		}).WithTimeout(15 * time.Second).Should(Succeed())
		Eventually(func() []string { return eventReasons(key) }).WithTimeout(10 * time.Second).Should(ContainElement(ReasonBrokerUnreachable))

		window := 12 * time.Second
		passes, mark, attempts := kcPasses.of(key), managerCalls.mark(), len(kcBrokerCalls.list(0, toHost(dead)))
		rv := getCluster(key).ResourceVersion
		time.Sleep(window)
		passes = kcPasses.of(key) - passes
		attempts = len(kcBrokerCalls.list(0, toHost(dead))) - attempts
		writes := managerCalls.list(mark, all(isWrite, inNamespace(ns)))
		logFigure("Unreachable brokers for %v: %d reconciles, %d broker attempts, %d API writes %v", window, passes, attempts, len(writes), writes)
		Expect(getCluster(key).ResourceVersion).To(Equal(rv), "the status changed while nothing did")
		Expect(writes).To(BeEmpty())
		Expect(passes).To(BeNumerically(">=", 1), "the operator stopped retrying")
		// Delays double from the progress interval up to the resync interval.
		Expect(passes).To(BeNumerically("<=", 6))

		updateCluster(key, func(kc *kairov1alpha1.KairoCluster) {
			kc.Annotations[kairov1alpha1.EndpointOverrideAnnotation] = live
		})
		Eventually(func(g Gomega) {
			kc := getCluster(key)
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, ReasonClusterReady))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionDegraded).Status).To(Equal(metav1.ConditionFalse))
		}).WithTimeout(15 * time.Second).Should(Succeed())
		Eventually(func() []string { return eventReasons(key) }).WithTimeout(10 * time.Second).Should(ContainElement("Recovered"))
	})

	It("restarts brokers one at a time after a spec change, waiting while a broker is down", func() {
		kc := getCluster(key)
		before := clusterPods(kc)
		oldHash := before[0].Annotations[resources.ConfigHashAnnotation]

		By("losing broker 2, which leaves partitions under-replicated")
		Expect(node.Fail(2)).To(Succeed())
		Eventually(func(g Gomega) {
			kc := getCluster(key)
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionDegraded)).To(haveCondition(metav1.ConditionTrue, ReasonUnderReplicated))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionFalse))
		}).WithTimeout(30 * time.Second).Should(Succeed())

		By("changing the broker config")
		updateCluster(key, func(kc *kairov1alpha1.KairoCluster) { kc.Spec.Config["log.retention.ms"] = "3600000" })

		By("restarting only the broker that is down, then waiting")
		Eventually(func(g Gomega) {
			pods := clusterPods(kc)
			g.Expect(pods).To(HaveKey(int32(2)))
			g.Expect(pods[2].UID).NotTo(Equal(before[2].UID))
			g.Expect(pods[2].Annotations[resources.ConfigHashAnnotation]).NotTo(Equal(oldHash))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			pods := clusterPods(kc)
			g.Expect(pods[0].UID).To(Equal(before[0].UID))
			g.Expect(pods[1].UID).To(Equal(before[1].UID))
		}).WithTimeout(8 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
		progressing := condition(getCluster(key).Status.Conditions, kairov1alpha1.ConditionProgressing)
		Expect(progressing).To(haveCondition(metav1.ConditionTrue, ReasonRollingRestart))
		Expect(progressing.Message).To(ContainSubstring("2 of 3 brokers run an outdated pod template; waiting for brokers [2] to be ready"))
		Expect(condition(getCluster(key).Status.Conditions, kairov1alpha1.ConditionDegraded).Reason).To(Equal(ReasonUnderReplicated))
		controller := *getCluster(key).Status.ControllerID

		By("bringing broker 2 back; the others then restart one at a time, the controller last")
		monitor := startPodMonitor(kc, 3, func(id int32) bool { return brokers.Ready(int(id)) })
		node.Recover(2)
		Eventually(func(g Gomega) {
			kc := getCluster(key)
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionProgressing)).To(haveCondition(metav1.ConditionFalse, ReasonUpToDate))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionDegraded).Status).To(Equal(metav1.ConditionFalse))
			for _, p := range clusterPods(kc) {
				g.Expect(p.Annotations[resources.ConfigHashAnnotation]).NotTo(Equal(oldHash))
			}
		}).WithTimeout(120 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		seen := monitor.finish()
		replaced := seen.replaced
		var secret corev1.Secret
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "kairo-peer-secret"}, &secret)).To(Succeed())
		Expect(string(secret.Data[resources.PeerSecretKey])).To(Equal(peerSecret),
			"the cluster secret changed under running brokers")
		logFigure("Rolling restart after broker 2 came back: at most %d broker(s) down at once (%s), at most %d pod(s) not ready at once; pods replaced in order %v; controller was broker %d",
			seen.maxDown, seen.downAt, seen.maxNotReady, replaced, controller)
		Expect(seen.maxDown).To(Equal(1), "two brokers were down at once: %s", seen.downAt)
		Expect(replaced).To(HaveLen(2))
		Expect(replaced).NotTo(ContainElement(int32(2)))
		if controller != 2 {
			Expect(replaced[len(replaced)-1]).To(Equal(controller), "the controller was not restarted last")
		}
		Eventually(func() []string { return eventReasons(key) }).WithTimeout(10 * time.Second).Should(ContainElement(ReasonRestartingBroker))

		By("the restarted brokers running the new configuration")
		for i := 0; i < 3; i++ {
			props, err := os.ReadFile(brokers.PropertiesFile(i))
			Expect(err).NotTo(HaveOccurred())
			Expect(string(props)).To(ContainSubstring("log.retention.ms=3600000"))
		}
	})

	It("scales up, and rebalances partitions onto the new broker when asked to", func() {
		kc := getCluster(key)
		before := clusterPods(kc)
		updateCluster(key, func(kc *kairov1alpha1.KairoCluster) {
			kc.Spec.Replicas = 4
			kc.Spec.RebalanceOnScaleUp = true
		})
		Eventually(func(g Gomega) {
			kc := getCluster(key)
			g.Expect(kc.Status.ReadyReplicas).To(BeEquivalentTo(4))
			g.Expect(kc.Status.Brokers).To(HaveLen(4))
			g.Expect(kc.Status.Brokers[3].State).To(Equal(api.BrokerAlive))
			g.Expect(kc.Status.Brokers[3].Partitions).To(BeNumerically(">", 0), "nothing was rebalanced onto broker 3")
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionProgressing).Status).To(Equal(metav1.ConditionFalse))
		}).WithTimeout(60 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		Eventually(func() []string { return eventReasons(key) }).WithTimeout(10 * time.Second).Should(ContainElements(ReasonScalingUp, ReasonRebalancing))
		brokerList, err := svc.Brokers(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(brokerList).To(HaveLen(4))
		for id, p := range clusterPods(kc) {
			if id < 3 {
				Expect(p.UID).To(Equal(before[id].UID), "scaling up restarted broker %d", id)
			}
		}
	})

	It("refuses a scale down the remaining brokers cannot hold, then drains and removes the broker", func() {
		_, err := svc.CreateTopic(ctx, api.CreateTopicRequest{Name: "wide", Partitions: 1, ReplicationFactor: 4})
		Expect(err).NotTo(HaveOccurred())

		By("a scale down to 1 that breaks both rules, refused with both reasons")
		refusedAt := time.Now()
		updateCluster(key, func(kc *kairov1alpha1.KairoCluster) { kc.Spec.Replicas = 1 })
		Eventually(func(g Gomega) {
			c := condition(getCluster(key).Status.Conditions, kairov1alpha1.ConditionDegraded)
			g.Expect(c).To(haveCondition(metav1.ConditionTrue, ReasonScaleDownRefused))
			g.Expect(c.Message).To(ContainSubstring("Cannot scale down to 1 brokers: "))
			g.Expect(c.Message).To(ContainSubstring("brokers 0 to 2 are the voters of the metadata quorum and cannot be removed"))
			g.Expect(c.Message).To(ContainSubstring("topic wide has 4 replicas per partition, so the topics need at least 4 brokers"))
		}).WithTimeout(15 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			var notes []string
			for _, e := range eventsAbout(key.Namespace, "KairoCluster", key.Name) {
				if e.Reason == ReasonScaleDownRefused && !e.EventTime.Time.Before(refusedAt.Truncate(time.Second)) {
					notes = append(notes, e.Note)
				}
			}
			g.Expect(notes).To(ContainElement(And(
				ContainSubstring("brokers 0 to 2 are the voters of the metadata quorum"),
				MatchRegexp(`topic \S+ has [34] replicas per partition`))))
		}).WithTimeout(10 * time.Second).Should(Succeed())

		By("a scale down to 3, which only the wide topic prevents")
		updateCluster(key, func(kc *kairov1alpha1.KairoCluster) { kc.Spec.Replicas = 3 })
		Eventually(func(g Gomega) {
			kc := getCluster(key)
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionDegraded)).To(haveCondition(metav1.ConditionTrue, ReasonScaleDownRefused))
			// The operator's own check (topic wide has 4 replicas) or, when
			// its metadata does not show the new topic yet, the brokers'
			// refusal to drain broker 3: either way nothing moves.
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionDegraded).Message).To(Or(
				ContainSubstring("Cannot scale down to 3 brokers: topic wide has 4 replicas"),
				ContainSubstring("Cannot scale down to 3 brokers: broker 3 cannot be drained")))
		}).WithTimeout(15 * time.Second).Should(Succeed())
		Eventually(func() []string { return eventReasons(key) }).WithTimeout(10 * time.Second).Should(ContainElement(ReasonScaleDownRefused))
		Consistently(func(g Gomega) {
			sts := &appsv1.StatefulSet{}
			g.Expect(k8sClient.Get(ctx, key, sts)).To(Succeed())
			g.Expect(*sts.Spec.Replicas).To(BeEquivalentTo(4))
			b, err := svc.Broker(ctx, 3)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(b.State).To(Equal(api.BrokerAlive), "a refused scale down moved replicas")
		}).WithTimeout(3 * time.Second).Should(Succeed())

		By("making room: the wide topic goes")
		err = svc.DeleteTopic(ctx, "wide")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			sts := &appsv1.StatefulSet{}
			g.Expect(k8sClient.Get(ctx, key, sts)).To(Succeed())
			g.Expect(*sts.Spec.Replicas).To(BeEquivalentTo(3))
			g.Expect(sts.Annotations).NotTo(HaveKey(OperatorDrainsAnnotation), "the operator still remembers a drain")
			list, err := svc.Brokers(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(list).To(HaveLen(3), "broker 3 was not removed from the cluster")
			kc := getCluster(key)
			g.Expect(kc.Status.Brokers).To(HaveLen(3))
			g.Expect(clusterPods(kc)).To(HaveLen(3))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionDegraded).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionProgressing).Status).To(Equal(metav1.ConditionFalse))
		}).WithTimeout(60 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		Eventually(func() []string { return eventReasons(key) }).WithTimeout(10 * time.Second).Should(ContainElements(ReasonDraining, ReasonScalingDown, ReasonBrokerRemoved))
		orders, err := svc.DescribeTopic(ctx, "orders")
		Expect(err).NotTo(HaveOccurred())
		for _, p := range orders.Partitions {
			Expect(p.Replicas).NotTo(ContainElement(int32(3)), "partition %d still on broker 3", p.Partition)
			Expect(p.Replicas).To(HaveLen(3))
		}
	})

	It("scales up again over the retained claim of the removed broker", func() {
		// whenScaled: Retain kept data-kairo-3, and the node starts broker 3
		// on its old data directory: old raft state, removed from the quorum.
		claim := &corev1.PersistentVolumeClaim{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "data-kairo-3"}, claim)).To(Succeed())
		claimUID := claim.UID
		_, err := os.Stat(filepath.Join(brokers.DataDir(3), "metadata"))
		Expect(err).NotTo(HaveOccurred(), "broker 3's old raft state is gone; the spec would not test a return over it")

		updateCluster(key, func(kc *kairov1alpha1.KairoCluster) { kc.Spec.Replicas = 4 })
		Eventually(func(g Gomega) {
			kc := getCluster(key)
			g.Expect(kc.Status.ReadyReplicas).To(BeEquivalentTo(4))
			g.Expect(kc.Status.Brokers).To(HaveLen(4))
			for _, b := range kc.Status.Brokers {
				g.Expect(b.Ready).To(BeTrue(), "broker %d", b.ID)
				g.Expect(b.State).To(Equal(api.BrokerAlive), "broker %d", b.ID)
			}
			g.Expect(kc.Status.Brokers[3].Partitions).To(BeNumerically(">", 0), "nothing was rebalanced onto the returning broker 3")
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionProgressing).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionDegraded).Status).To(Equal(metav1.ConditionFalse))
		}).WithTimeout(60 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "data-kairo-3"}, claim)).To(Succeed())
		Expect(claim.UID).To(Equal(claimUID), "broker 3 came back on a new claim")
		b, err := svc.Broker(ctx, 3)
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Voter).To(BeFalse())
		Expect(b.InSync).To(BeTrue())
	})

	It("grows the volume claims when spec.storage.size grows", func() {
		updateCluster(key, func(kc *kairov1alpha1.KairoCluster) { kc.Spec.Storage.Size = resource.MustParse("2Gi") })
		Eventually(func(g Gomega) {
			for id := 0; id < 3; id++ {
				pvc := &corev1.PersistentVolumeClaim{}
				g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("data-kairo-%d", id)}, pvc)).To(Succeed())
				g.Expect(pvc.Spec.Resources.Requests.Storage().String()).To(Equal("2Gi"))
				g.Expect(pvc.Status.Capacity.Storage().String()).To(Equal("2Gi"))
			}
			kc := getCluster(key)
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionProgressing).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionDegraded).Status).To(Equal(metav1.ConditionFalse))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Eventually(func() []string { return eventReasons(key) }).WithTimeout(10 * time.Second).Should(ContainElement(ReasonResizingStorage))
		sts := &appsv1.StatefulSet{}
		Expect(k8sClient.Get(ctx, key, sts)).To(Succeed())
		Expect(sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String()).To(Equal("1Gi"),
			"volumeClaimTemplates cannot change")
	})

	It("is garbage-collected with its children when deleted", func() {
		kc := getCluster(key)
		Expect(k8sClient.Delete(ctx, kc)).To(Succeed())
		for _, child := range []client.Object{
			&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kairo"}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kairo"}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kairo-headless"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kairo-config"}},
			&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kairo"}},
		} {
			expectGone(child, 60*time.Second)
		}
		Eventually(func() map[int32]corev1.Pod { return clusterPods(kc) }).WithTimeout(30 * time.Second).Should(BeEmpty())
		var claims corev1.PersistentVolumeClaimList
		Expect(k8sClient.List(ctx, &claims, client.InNamespace(ns))).To(Succeed())
		Expect(claims.Items).NotTo(BeEmpty(), "claims are retained by default (whenDeleted: Retain)")
	})
})

var _ = Describe("KairoCluster controller without brokers", Ordered, func() {
	const ns = kcNamespacePrefix + "other"

	BeforeAll(func() {
		requireControllerManager()
		kcNamespace(ns)
		Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, &storagev1.StorageClass{
			ObjectMeta:  metav1.ObjectMeta{Name: "kc-fixed"},
			Provisioner: "kairolog.io/test",
		}))).To(Succeed())
	})

	newCluster := func(name string, mutate func(*kairov1alpha1.KairoCluster)) *kairov1alpha1.KairoCluster {
		kc := &kairov1alpha1.KairoCluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
				Annotations: map[string]string{kairov1alpha1.EndpointOverrideAnnotation: closedEndpoint()}},
			Spec: kairov1alpha1.KairoClusterSpec{Replicas: 1,
				Storage: kairov1alpha1.StorageSpec{Size: resource.MustParse("1Gi")}},
		}
		if mutate != nil {
			mutate(kc)
		}
		Expect(k8sClient.Create(ctx, kc)).To(Succeed())
		return kc
	}

	It("never adopts or overwrites a child it does not own", func() {
		foreign := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken-config"},
			Data:       map[string]string{"owner": "someone else"},
		}
		Expect(k8sClient.Create(ctx, foreign)).To(Succeed())
		kc := newCluster("taken", nil)
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, kc))).To(Succeed()) })
		key := client.ObjectKeyFromObject(kc)
		Eventually(func(g Gomega) {
			kc := getCluster(key)
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionDegraded)).To(haveCondition(metav1.ConditionTrue, ReasonResourceNotOwned))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionDegraded).Message).To(ContainSubstring("ConfigMap taken-config"))
			g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonResourceNotOwned))
		}).WithTimeout(15 * time.Second).Should(Succeed())
		Eventually(func() []string { return eventReasons(key) }).WithTimeout(10 * time.Second).Should(ContainElement(ReasonResourceNotOwned))
		Consistently(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(foreign), cm)).To(Succeed())
			g.Expect(cm.Data).To(Equal(foreign.Data))
			g.Expect(cm.OwnerReferences).To(BeEmpty())
			g.Expect(k8sClient.Get(ctx, key, &appsv1.StatefulSet{})).NotTo(Succeed(), "a StatefulSet would mount someone else's ConfigMap")
		}).WithTimeout(3 * time.Second).Should(Succeed())

		By("the foreign ConfigMap going away")
		Expect(k8sClient.Delete(ctx, foreign)).To(Succeed())
		Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(foreign), cm)).To(Succeed())
			g.Expect(metav1.IsControlledBy(cm, kc)).To(BeTrue())
			g.Expect(k8sClient.Get(ctx, key, &appsv1.StatefulSet{})).To(Succeed())
			g.Expect(condition(getCluster(key).Status.Conditions, kairov1alpha1.ConditionDegraded).Reason).NotTo(Equal(ReasonResourceNotOwned))
		}).WithTimeout(40 * time.Second).Should(Succeed())
	})

	It("says why its volumes cannot grow, and deletes its claims with it when asked to", func() {
		kc := newCluster("fixed", func(kc *kairov1alpha1.KairoCluster) {
			kc.Spec.Storage.StorageClassName = ptr.To("kc-fixed")
			kc.Spec.Storage.RetentionPolicy = &kairov1alpha1.StorageRetentionPolicy{
				WhenDeleted: kairov1alpha1.ClaimDelete, WhenScaled: kairov1alpha1.ClaimDelete}
		})
		key := client.ObjectKeyFromObject(kc)
		claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data-fixed-0"}}
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(claim), claim) }).
			WithTimeout(20 * time.Second).Should(Succeed())
		updateCluster(key, func(kc *kairov1alpha1.KairoCluster) { kc.Spec.Storage.Size = resource.MustParse("5Gi") })
		Eventually(func(g Gomega) {
			kc := getCluster(key)
			c := condition(kc.Status.Conditions, kairov1alpha1.ConditionDegraded)
			g.Expect(c).To(haveCondition(metav1.ConditionTrue, ReasonStorageResizeUnsupported))
			g.Expect(c.Message).To(ContainSubstring("StorageClass kc-fixed does not allow volume expansion"))
			g.Expect(c.ObservedGeneration).To(Equal(kc.Generation))
		}).WithTimeout(15 * time.Second).Should(Succeed())
		Eventually(func() []string { return eventReasons(key) }).WithTimeout(10 * time.Second).Should(ContainElement(ReasonStorageResizeUnsupported))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		Expect(claim.Spec.Resources.Requests.Storage().String()).To(Equal("1Gi"))

		By("deleting the cluster, whose claims go with it (whenDeleted: Delete)")
		Expect(k8sClient.Delete(ctx, kc)).To(Succeed())
		expectGone(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fixed"}}, 60*time.Second)
		Eventually(func(g Gomega) {
			pvc := &corev1.PersistentVolumeClaim{}
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(claim), pvc)
			if err == nil {
				// Claims are protected by a finalizer until no pod uses them.
				g.Expect(pvc.DeletionTimestamp).NotTo(BeNil())
			}
		}).WithTimeout(60 * time.Second).Should(Succeed())
	})
})

// compact counts repeated calls: "GET /metadata x4".
func compact(calls []string) []string {
	counts := map[string]int{}
	var order []string
	for _, c := range calls {
		if counts[c] == 0 {
			order = append(order, c)
		}
		counts[c]++
	}
	out := make([]string, 0, len(order))
	for _, c := range order {
		out = append(out, fmt.Sprintf("%s x%d", c, counts[c]))
	}
	slices.Sort(out)
	return out
}
