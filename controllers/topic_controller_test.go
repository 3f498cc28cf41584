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
	"net/url"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/api"
	brokerclient "github.com/kairolog/kairolog/broker/client"
)

const topicNamespace = "topics"

// newTopic builds a Topic on cluster with one partition; mutate adjusts it.
func newTopic(name, cluster string, mutate func(*kairov1alpha1.Topic)) *kairov1alpha1.Topic {
	t := &kairov1alpha1.Topic{ObjectMeta: metav1.ObjectMeta{Namespace: topicNamespace, Name: name}}
	t.Spec.ClusterRef.Name = cluster
	t.Spec.Partitions = 1
	if mutate != nil {
		mutate(t)
	}
	return t
}

func createTopic(name, cluster string, mutate func(*kairov1alpha1.Topic)) *kairov1alpha1.Topic {
	GinkgoHelper()
	return create(newTopic(name, cluster, mutate))
}

// topicNamed is the Topic of the Topic specs' namespace with this name,
// for get, update and eventually.
func topicNamed(name string) *kairov1alpha1.Topic {
	return &kairov1alpha1.Topic{ObjectMeta: metav1.ObjectMeta{Namespace: topicNamespace, Name: name}}
}

// updateTopic changes a Topic's spec.
func updateTopic(name string, change func(*kairov1alpha1.Topic)) error {
	return update(topicNamed(name), change)
}

// eventuallyTopic waits until the Topic satisfies check.
func eventuallyTopic(name string, check func(g Gomega, t *kairov1alpha1.Topic)) *kairov1alpha1.Topic {
	GinkgoHelper()
	return eventually(topicNamed(name), 30*time.Second, check)
}

func readyTopic(name string) *kairov1alpha1.Topic {
	GinkgoHelper()
	return eventuallyTopic(name, func(g Gomega, t *kairov1alpha1.Topic) {
		g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue), "Ready: %+v", t.Status.Conditions)
		g.Expect(t.Status.ObservedGeneration).To(Equal(t.Generation))
	})
}

var _ = Describe("Topic controller", Ordered, func() {
	var (
		brokers []*testBroker
		bc      *brokerclient.Client
	)
	const clusterName = "kairo"

	BeforeAll(func() {
		ensureNamespace(topicNamespace)
		brokers = startBrokers(1)
		bc = brokers[0].client()
		cleanUpCluster(createCluster(topicNamespace, clusterName, brokers[0].url))
	})

	It("creates the topic, reports it in status and records an event", func() {
		name := uniqueName("orders")
		createTopic(name, clusterName, func(t *kairov1alpha1.Topic) {
			t.Spec.Partitions = 3
			t.Spec.Config = map[string]string{"retention.ms": "3600000"}
		})
		t := readyTopic(name)
		Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, ReasonCreated))
		Expect(controllerutil.ContainsFinalizer(t, kairov1alpha1.FinalizerName)).To(BeTrue())

		desc, err := bc.DescribeTopic(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(desc.PartitionCount).To(Equal(int32(3)))
		Expect(desc.Config).To(Equal(map[string]string{"retention.ms": "3600000"}))

		Expect(t.Status.TopicName).To(Equal(name))
		Expect(t.Status.TopicID).To(Equal(desc.TopicID))
		Expect(t.Status.Partitions).To(Equal(int32(3)))
		Expect(t.Status.Replicas).To(Equal(int32(1)))
		Expect(t.Status.UnderReplicatedPartitions).To(BeZero())
		Expect(t.Status.OfflinePartitions).To(BeZero())
		Expect(t.Status.PartitionStatuses).To(HaveLen(3))
		for i, ps := range t.Status.PartitionStatuses {
			Expect(ps.Partition).To(Equal(int32(i)))
			Expect(ps.Leader).To(Equal(int32(0)))
			Expect(ps.ISR).To(Equal([]int32{0}))
		}
		expectEvent(topicNamespace, name, ReasonTopicCreated)
	})

	It("raises partitions and applies config changes from the spec", func() {
		name := uniqueName("grow")
		createTopic(name, clusterName, nil)
		readyTopic(name)

		Expect(updateTopic(name, func(t *kairov1alpha1.Topic) {
			t.Spec.Partitions = 4
			t.Spec.Config = map[string]string{"segment.bytes": "1048576", "retention.bytes": "-1"}
		})).To(Succeed())
		t := eventuallyTopic(name, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(t.Status.ObservedGeneration).To(Equal(t.Generation))
			g.Expect(t.Status.Partitions).To(Equal(int32(4)))
		})
		Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, ReasonUpdated))
		Expect(t.Status.PartitionStatuses).To(HaveLen(4))
		desc, err := bc.DescribeTopic(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(desc.PartitionCount).To(Equal(int32(4)))
		Expect(desc.Config).To(Equal(map[string]string{"segment.bytes": "1048576", "retention.bytes": "-1"}))
		expectEvent(topicNamespace, name, ReasonPartitionsIncreased)
		expectEvent(topicNamespace, name, ReasonConfigUpdated)

		By("removing every override when the spec's config is emptied")
		Expect(updateTopic(name, func(t *kairov1alpha1.Topic) { t.Spec.Config = nil })).To(Succeed())
		Eventually(func(g Gomega) {
			desc, err := bc.DescribeTopic(ctx, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(desc.Config).To(BeEmpty())
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})

	It("refuses a partition decrease in validation, and with NotSupported when the brokers hold more", func() {
		name := uniqueName("shrink")
		createTopic(name, clusterName, func(t *kairov1alpha1.Topic) { t.Spec.Partitions = 2 })
		readyTopic(name)

		err := updateTopic(name, func(t *kairov1alpha1.Topic) { t.Spec.Partitions = 1 })
		expectRejected(err, "partitions cannot be decreased")

		By("adding partitions on the brokers behind the operator's back")
		err = bc.AddPartitions(ctx, name, 5)
		Expect(err).NotTo(HaveOccurred())
		t := eventuallyTopic(name, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonNotSupported))
		})
		Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady).Message).To(ContainSubstring("cannot be decreased"))
		Expect(t.Status.Partitions).To(Equal(int32(5)))
		expectEvent(topicNamespace, name, ReasonNotSupported)

		By("becoming Ready again once the spec asks for what the brokers hold")
		Expect(updateTopic(name, func(t *kairov1alpha1.Topic) { t.Spec.Partitions = 5 })).To(Succeed())
		readyTopic(name)
	})

	It("sets config changed out of band back to the spec", func() {
		name := uniqueName("drift")
		createTopic(name, clusterName, func(t *kairov1alpha1.Topic) {
			t.Spec.Config = map[string]string{"retention.ms": "60000"}
		})
		readyTopic(name)

		_, err := bc.SetTopicConfig(ctx, name, map[string]string{"retention.ms": "1", "max.message.bytes": "2048"})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			desc, err := bc.DescribeTopic(ctx, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(desc.Config).To(Equal(map[string]string{"retention.ms": "60000"}))
		}).WithTimeout(4 * testResync).WithPolling(100 * time.Millisecond).Should(Succeed())
		e := expectEvent(topicNamespace, name, ReasonConfigDriftReverted)
		Expect(e.Note).To(ContainSubstring("max.message.bytes=2048"))
	})

	It("adopts an existing topic whose partitions and replicas fit the spec", func() {
		name := uniqueName("legacy")
		created, err := bc.CreateTopic(ctx, api.CreateTopicRequest{Name: name, Partitions: 2,
			Config: map[string]string{"retention.ms": "5000"}})
		Expect(err).NotTo(HaveOccurred())
		_, err = bc.Produce(ctx, brokerclient.ProduceRequest{Topic: name, Partition: ptr.To(int32(0)), Message: "kept"})
		Expect(err).NotTo(HaveOccurred())

		createTopic(name, clusterName, func(t *kairov1alpha1.Topic) {
			t.Spec.Partitions = 3
			t.Spec.Replicas = ptr.To(int32(1))
			t.Spec.Config = map[string]string{"retention.ms": "7200000"}
		})
		t := readyTopic(name)
		Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, ReasonAdopted))
		Expect(t.Status.TopicID).To(Equal(created.TopicID), "the existing topic is kept, not recreated")
		Expect(t.Status.Partitions).To(Equal(int32(3)))
		Expect(t.Status.PartitionStatuses[0].HighWatermark).To(Equal(int64(1)), "its records are still there")
		desc, err := bc.DescribeTopic(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(desc.Config).To(Equal(map[string]string{"retention.ms": "7200000"}))
		expectEvent(topicNamespace, name, ReasonTopicAdopted)
	})

	It("does not adopt a topic with more partitions, and leaves it on the brokers when deleted", func() {
		name := uniqueName("bigger")
		created, err := bc.CreateTopic(ctx, api.CreateTopicRequest{Name: name, Partitions: 4})
		Expect(err).NotTo(HaveOccurred())

		createTopic(name, clusterName, func(t *kairov1alpha1.Topic) { t.Spec.Partitions = 2 })
		t := eventuallyTopic(name, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonIncompatible))
		})
		Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady).Message).To(ContainSubstring("4 partitions"))
		Expect(t.Status.TopicID).To(BeEmpty())
		expectEvent(topicNamespace, name, ReasonIncompatible)

		By("asking the brokers once per resync, without retrying the create, while it stays incompatible")
		host := brokers[0].host
		mark := brokerCalls.mark()
		window := 2*testResync + testResync/2
		time.Sleep(window)
		Expect(brokerCalls.count(mark, toPath(host, "/topics"))).To(BeZero())
		Expect(brokerCalls.count(mark, toPath(host, "/topics/"+name))).To(BeNumerically("<=", int(window/testResync)+1))

		Expect(k8sClient.Delete(ctx, t)).To(Succeed())
		expectGone(t, 20*time.Second)
		desc, err := bc.DescribeTopic(ctx, name)
		Expect(err).NotTo(HaveOccurred(), "a topic the resource never adopted stays")
		Expect(desc.TopicID).To(Equal(created.TopicID))
		Expect(desc.PartitionCount).To(Equal(int32(4)))

		By("creating its own topic once the incompatible one is deleted")
		again := createTopic(uniqueName("bigger"), clusterName, func(t *kairov1alpha1.Topic) {
			t.Spec.TopicName = name
			t.Spec.Partitions = 2
		})
		eventuallyTopic(again.Name, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonIncompatible))
		})
		Expect(bc.DeleteTopic(ctx, name)).To(Succeed())
		a := eventuallyTopic(again.Name, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, ReasonCreated))
		})
		Expect(a.Status.TopicID).NotTo(Equal(created.TopicID))
		Expect(a.Status.Partitions).To(Equal(int32(2)))
	})

	It("deletes the topic on the brokers with deletionPolicy Delete", func() {
		name := uniqueName("temp")
		t := createTopic(name, clusterName, nil)
		readyTopic(name)
		Expect(k8sClient.Delete(ctx, t)).To(Succeed())
		expectGone(t, 20*time.Second)
		_, err := bc.DescribeTopic(ctx, name)
		Expect(api.IsCode(err, api.CodeUnknownTopic)).To(BeTrue(), "describe after delete: %v", err)
		expectEvent(topicNamespace, name, ReasonTopicDeleted)
	})

	It("leaves the topic on the brokers with deletionPolicy Retain", func() {
		name := uniqueName("keep")
		createTopic(name, clusterName, func(t *kairov1alpha1.Topic) {
			t.Spec.DeletionPolicy = kairov1alpha1.DeletionPolicyRetain
		})
		t := readyTopic(name)
		Expect(controllerutil.ContainsFinalizer(t, kairov1alpha1.FinalizerName)).To(BeFalse(),
			"nothing to clean up, so no finalizer")
		Expect(k8sClient.Delete(ctx, t)).To(Succeed())
		expectGone(t, 20*time.Second)
		_, err := bc.DescribeTopic(ctx, name)
		Expect(err).NotTo(HaveOccurred())

		By("adding the finalizer when the policy changes to Delete")
		name2 := uniqueName("keep")
		createTopic(name2, clusterName, func(t *kairov1alpha1.Topic) {
			t.Spec.DeletionPolicy = kairov1alpha1.DeletionPolicyRetain
		})
		readyTopic(name2)
		Expect(updateTopic(name2, func(t *kairov1alpha1.Topic) { t.Spec.DeletionPolicy = kairov1alpha1.DeletionPolicyDelete })).To(Succeed())
		eventuallyTopic(name2, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(controllerutil.ContainsFinalizer(t, kairov1alpha1.FinalizerName)).To(BeTrue())
		})
	})

	It("reports a topic deleted out of band and recreates it only when the spec says so", func() {
		name := uniqueName("vanish")
		createTopic(name, clusterName, nil)
		before := readyTopic(name).Status.TopicID

		Expect(bc.DeleteTopic(ctx, name)).To(Succeed())
		t := eventuallyTopic(name, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonDeletedOutOfBand))
		})
		Expect(t.Status.TopicID).To(Equal(before))
		Expect(t.Status.Partitions).To(BeZero())
		expectEvent(topicNamespace, name, ReasonTopicDeletedOutOfBand)
		Consistently(func() error {
			_, err := bc.DescribeTopic(ctx, name)
			return err
		}).WithTimeout(2*testResync + time.Second).Should(MatchError(ContainSubstring(api.CodeUnknownTopic)))

		Expect(updateTopic(name, func(t *kairov1alpha1.Topic) { t.Spec.RecreateIfDeleted = true })).To(Succeed())
		t = readyTopic(name)
		Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, ReasonRecreated))
		Expect(t.Status.TopicID).NotTo(BeEmpty())
		Expect(t.Status.TopicID).NotTo(Equal(before))
		expectEvent(topicNamespace, name, ReasonTopicRecreated)

		By("recreating it at once on the next out-of-band deletion")
		again := t.Status.TopicID
		Expect(bc.DeleteTopic(ctx, name)).To(Succeed())
		eventuallyTopic(name, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(t.Status.TopicID).NotTo(Equal(again))
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		})
		_, err := bc.DescribeTopic(ctx, name)
		Expect(err).NotTo(HaveOccurred())
	})

	It("lets the older of two Topics naming one topic manage it; the newer reports Conflict", func() {
		shared := uniqueName("shared")
		first := createTopic(uniqueName("first"), clusterName, func(t *kairov1alpha1.Topic) { t.Spec.TopicName = shared })
		readyTopic(first.Name)
		time.Sleep(1100 * time.Millisecond) // creation times have second resolution

		second := createTopic(uniqueName("second"), clusterName, func(t *kairov1alpha1.Topic) {
			t.Spec.TopicName = shared
			t.Spec.Partitions = 3
		})
		s := eventuallyTopic(second.Name, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonConflict))
		})
		Expect(condition(s.Status.Conditions, kairov1alpha1.ConditionReady).Message).To(ContainSubstring(first.Name))
		Expect(controllerutil.ContainsFinalizer(s, kairov1alpha1.FinalizerName)).To(BeFalse())
		expectEvent(topicNamespace, second.Name, ReasonConflict)
		desc, err := bc.DescribeTopic(ctx, shared)
		Expect(err).NotTo(HaveOccurred())
		Expect(desc.PartitionCount).To(Equal(int32(1)), "the newer Topic changes nothing")

		By("deleting the newer Topic, which never managed the topic")
		Expect(k8sClient.Delete(ctx, s)).To(Succeed())
		expectGone(s, 20*time.Second)
		_, err = bc.DescribeTopic(ctx, shared)
		Expect(err).NotTo(HaveOccurred())

		By("handing the topic over when the older Topic is deleted while a newer one names it")
		third := createTopic(uniqueName("third"), clusterName, func(t *kairov1alpha1.Topic) {
			t.Spec.TopicName = shared
			t.Spec.Partitions = 2
		})
		eventuallyTopic(third.Name, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonConflict))
		})
		Expect(k8sClient.Delete(ctx, first)).To(Succeed())
		expectGone(first, 20*time.Second)
		expectEvent(topicNamespace, first.Name, ReasonHandedOver)
		th := eventuallyTopic(third.Name, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, ReasonAdopted))
		})
		Expect(th.Status.TopicID).To(Equal(desc.TopicID), "the topic was not deleted and recreated")
		Expect(th.Status.Partitions).To(Equal(int32(2)))
	})

	It("releases the finalizer when the KairoCluster is being deleted or gone", func() {
		doomed := uniqueName("doomed")
		kc := createCluster(topicNamespace, doomed, brokers[0].url)
		const hold = "test.kairolog.io/hold"
		controllerutil.AddFinalizer(kc, hold)
		Expect(k8sClient.Update(ctx, kc)).To(Succeed())

		early, late := uniqueName("early"), uniqueName("late")
		t1 := createTopic(early, doomed, nil)
		t2 := createTopic(late, doomed, nil)
		readyTopic(early)
		readyTopic(late)

		By("deleting the cluster, which stays while another finalizer holds it")
		Expect(k8sClient.Delete(ctx, kc)).To(Succeed())
		eventuallyTopic(early, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonClusterNotReady))
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady).Message).To(ContainSubstring("being deleted"))
		})
		Expect(k8sClient.Delete(ctx, t1)).To(Succeed())
		expectGone(t1, 20*time.Second)
		e := expectEvent(topicNamespace, early, ReasonFinalizerReleased)
		Expect(e.Note).To(ContainSubstring("being deleted"))
		_, err := bc.DescribeTopic(ctx, early)
		Expect(err).NotTo(HaveOccurred(), "the brokers were not asked to delete it")

		By("letting the cluster go")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed())
		controllerutil.RemoveFinalizer(kc, hold)
		Expect(k8sClient.Update(ctx, kc)).To(Succeed())
		expectGone(kc, 20*time.Second)
		Expect(k8sClient.Delete(ctx, t2)).To(Succeed())
		expectGone(t2, 20*time.Second)
		e = expectEvent(topicNamespace, late, ReasonFinalizerReleased)
		Expect(e.Note).To(ContainSubstring("is gone"))

		By("reporting a Topic whose cluster does not exist, without a finalizer")
		orphan := uniqueName("orphan")
		createTopic(orphan, uniqueName("nowhere"), nil)
		o := eventuallyTopic(orphan, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonClusterNotReady))
		})
		Expect(condition(o.Status.Conditions, kairov1alpha1.ConditionReady).Message).To(ContainSubstring("does not exist"))
		Expect(o.Finalizers).To(BeEmpty())
		expectEvent(topicNamespace, orphan, ReasonClusterNotReady)
	})

	It("reports unreachable brokers with ClusterNotReady, backs off, and recovers when they are back", func() {
		endpoint := closedEndpoint()
		away := uniqueName("away")
		kc := createCluster(topicNamespace, away, endpoint)
		cleanUpCluster(kc)
		name := uniqueName("unreached")
		createTopic(name, away, nil)
		t := eventuallyTopic(name, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonClusterNotReady))
		})
		Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady).Message).To(ContainSubstring("unreachable"))
		expectEvent(topicNamespace, name, ReasonClusterNotReady)

		u, err := url.Parse(endpoint)
		Expect(err).NotTo(HaveOccurred())
		brokerMark, apiMark := brokerCalls.mark(), managerCalls.mark()
		const window = 15 * time.Second
		time.Sleep(window)
		calls := brokerCalls.count(brokerMark, toHost(u.Host))
		logFigure("Unreachable brokers: %d calls for one Topic in %s (retries back off from %s, doubling, at most %s apart)",
			calls, window, brokerRetryBase, brokerRetryMax)
		Expect(calls).To(BeNumerically("<=", 6), "retries back off instead of looping")
		Expect(calls).To(BeNumerically(">=", 2), "retries go on")
		Expect(managerCalls.count(apiMark, writesTo("topics", client.ObjectKeyFromObject(t)))).To(BeZero(), "the same failure is not written again")

		By("pointing the cluster at a live broker")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed())
		kc.Annotations[kairov1alpha1.EndpointOverrideAnnotation] = brokers[0].url
		Expect(k8sClient.Update(ctx, kc)).To(Succeed())
		t = readyTopic(name)
		Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, ReasonCreated))
	})

	It("reports a replica count the brokers cannot hold", func() {
		name := uniqueName("toowide")
		createTopic(name, clusterName, nil)
		readyTopic(name)
		Expect(updateTopic(name, func(t *kairov1alpha1.Topic) { t.Spec.Replicas = ptr.To(int32(3)) })).To(Succeed())
		t := eventuallyTopic(name, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonBrokerError))
		})
		Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady).Message).To(ContainSubstring("replicas"))
		Expect(t.Status.Replicas).To(Equal(int32(1)))
	})

	It("writes no status and asks the brokers at most once per resync while idle", func() {
		names := make([]string, 5)
		for i := range names {
			names[i] = uniqueName("idle")
			createTopic(names[i], clusterName, func(t *kairov1alpha1.Topic) { t.Spec.Partitions = 2 })
		}
		for _, n := range names {
			readyTopic(n)
		}
		time.Sleep(testResync) // let creation settle

		host := brokers[0].host
		brokerMark, apiMark := brokerCalls.mark(), managerCalls.mark()
		window := 3*testResync + testResync/2
		time.Sleep(window)
		for _, n := range names {
			calls := brokerCalls.count(brokerMark, underPath(host, "/topics/"+n))
			writes := managerCalls.count(apiMark, writesTo("topics", types.NamespacedName{Namespace: topicNamespace, Name: n}))
			Expect(writes).To(BeZero(), "writes for idle Topic %s", n)
			Expect(calls).To(BeNumerically("<=", int(window/testResync)+1), "broker calls for idle Topic %s", n)
			Expect(calls).To(BeNumerically(">=", 2), "idle Topic %s is still observed", n)
		}
	})
})

// Replication-factor changes need more than one broker.
var _ = Describe("Topic controller on three brokers", Ordered, func() {
	var bc *brokerclient.Client
	cluster := uniqueName("trio")

	BeforeAll(func() {
		ensureNamespace(topicNamespace)
		brokers := startBrokers(3)
		bc = brokers[0].client()
		cleanUpCluster(createCluster(topicNamespace, cluster, brokers[0].url))
	})

	It("changes replicas through the brokers' reassignment", func() {
		name := uniqueName("widen")
		createTopic(name, cluster, func(t *kairov1alpha1.Topic) {
			t.Spec.Partitions = 2
			t.Spec.Replicas = ptr.To(int32(1))
		})
		readyTopic(name)
		_, err := bc.Produce(context.Background(), brokerclient.ProduceRequest{Topic: name, Partition: ptr.To(int32(0)), Message: "m"})
		Expect(err).NotTo(HaveOccurred())

		Expect(updateTopic(name, func(t *kairov1alpha1.Topic) { t.Spec.Replicas = ptr.To(int32(3)) })).To(Succeed())
		eventually(topicNamed(name), 60*time.Second, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(t.Status.ObservedGeneration).To(Equal(t.Generation))
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, ReasonUpdated))
			g.Expect(t.Status.Replicas).To(Equal(int32(3)))
			for _, ps := range t.Status.PartitionStatuses {
				g.Expect(ps.Replicas).To(HaveLen(3))
				g.Expect(ps.ISR).To(HaveLen(3))
			}
		})
		expectEvent(topicNamespace, name, ReasonReplicasChanging)
		desc, err := bc.DescribeTopic(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(desc.ReplicationFactor).To(Equal(int16(3)))
		Expect(desc.Partitions[0].HighWatermark).To(Equal(int64(1)))

		By("shrinking back to two replicas")
		Expect(updateTopic(name, func(t *kairov1alpha1.Topic) { t.Spec.Replicas = ptr.To(int32(2)) })).To(Succeed())
		eventually(topicNamed(name), 60*time.Second, func(g Gomega, t *kairov1alpha1.Topic) {
			g.Expect(t.Status.Replicas).To(Equal(int32(2)))
			g.Expect(condition(t.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			for _, ps := range t.Status.PartitionStatuses {
				g.Expect(ps.Replicas).To(HaveLen(2))
			}
		})
	})
})
