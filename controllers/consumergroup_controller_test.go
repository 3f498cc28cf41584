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

const groupNamespace = "groups"

// createGroup creates a ConsumerGroup on cluster; mutate adjusts it.
func createGroup(name, cluster string, mutate func(*kairov1alpha1.ConsumerGroup)) *kairov1alpha1.ConsumerGroup {
	GinkgoHelper()
	g := groupNamed(name)
	g.Spec.ClusterRef.Name = cluster
	if mutate != nil {
		mutate(g)
	}
	return create(g)
}

// groupNamed is the ConsumerGroup of the group specs' namespace with this
// name, for update and eventually.
func groupNamed(name string) *kairov1alpha1.ConsumerGroup {
	return &kairov1alpha1.ConsumerGroup{ObjectMeta: metav1.ObjectMeta{Namespace: groupNamespace, Name: name}}
}

// updateGroup changes a ConsumerGroup's spec.
func updateGroup(name string, change func(*kairov1alpha1.ConsumerGroup)) error {
	return update(groupNamed(name), change)
}

// eventuallyGroup waits until the ConsumerGroup satisfies check.
func eventuallyGroup(name string, check func(g Gomega, cg *kairov1alpha1.ConsumerGroup)) *kairov1alpha1.ConsumerGroup {
	GinkgoHelper()
	return eventually(groupNamed(name), 30*time.Second, check)
}

// offsetOf is the status entry of one partition.
func offsetOf(cg *kairov1alpha1.ConsumerGroup, topic string, partition int32) kairov1alpha1.PartitionOffsetStatus {
	for _, o := range cg.Status.Offsets {
		if o.Topic == topic && o.Partition == partition {
			return o
		}
	}
	return kairov1alpha1.PartitionOffsetStatus{Topic: topic, Partition: partition, CommittedOffset: -2}
}

// consumer is a group member driven by the spec through the generation protocol.
type consumer struct {
	bc         *brokerclient.Client
	group      string
	id         string
	generation int32
	assignment []api.TopicPartitions
}

// join joins group subscribed to topics and syncs its assignment.
func join(bc *brokerclient.Client, group string, topics ...string) *consumer {
	GinkgoHelper()
	j, err := bc.JoinGroup(ctx, api.JoinGroupRequest{Group: group, Topics: topics, ClientID: "spec-consumer",
		SessionTimeoutMs: 300000, RebalanceTimeoutMs: 5000})
	Expect(err).NotTo(HaveOccurred())
	s, err := bc.SyncGroup(ctx, group, j.MemberID, j.Generation)
	Expect(err).NotTo(HaveOccurred())
	return &consumer{bc: bc, group: group, id: j.MemberID, generation: j.Generation, assignment: s.Assignment}
}

func (c *consumer) commit(topic string, partition int32, offset int64) {
	GinkgoHelper()
	Expect(c.bc.CommitOffsets(ctx, api.CommitOffsetsRequest{Group: c.group, MemberID: c.id, Generation: c.generation,
		Offsets: []api.OffsetCommit{{Topic: topic, Partition: partition, Offset: offset}}})).To(Succeed())
}

func (c *consumer) leave() {
	GinkgoHelper()
	Expect(c.bc.LeaveGroup(ctx, c.group, c.id)).To(Succeed())
}

// produce writes n records to one partition; timestamps, when given, are
// the records' times in Unix ms.
func produce(bc *brokerclient.Client, topic string, partition int32, n int, timestamps ...int64) {
	GinkgoHelper()
	req := brokerclient.ProduceRequest{Topic: topic, Partition: ptr.To(partition)}
	for i := range n {
		r := brokerclient.ProduceRecord{Value: "record"}
		if i < len(timestamps) {
			r.Timestamp = timestamps[i]
		}
		req.Records = append(req.Records, r)
	}
	_, err := bc.Produce(ctx, req)
	Expect(err).NotTo(HaveOccurred())
}

func createBrokerTopic(bc *brokerclient.Client, partitions int32) string {
	GinkgoHelper()
	name := uniqueName("events")
	_, err := bc.CreateTopic(ctx, api.CreateTopicRequest{Name: name, Partitions: partitions})
	Expect(err).NotTo(HaveOccurred())
	return name
}

var _ = Describe("ConsumerGroup controller", Ordered, func() {
	var (
		brokers []*testBroker
		bc      *brokerclient.Client
	)
	const clusterName = "kairo"

	BeforeAll(func() {
		ensureNamespace(groupNamespace)
		brokers = startBrokers(1)
		bc = brokers[0].client()
		cleanUpCluster(createCluster(groupNamespace, clusterName, brokers[0].url))
	})

	It("reports members, committed offsets and lag that move with produced records and commits", func() {
		topic := createBrokerTopic(bc, 2)
		produce(bc, topic, 0, 3)
		produce(bc, topic, 1, 2)
		name := uniqueName("readers")
		createGroup(name, clusterName, func(g *kairov1alpha1.ConsumerGroup) { g.Spec.Topics = []string{topic} })

		cg := eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(cg.Status.Offsets).To(HaveLen(2))
		})
		Expect(cg.Status.GroupID).To(Equal(name))
		Expect(cg.Status.State).To(Equal("Empty"))
		Expect(cg.Status.MemberCount).To(BeZero())
		Expect(offsetOf(cg, topic, 0)).To(Equal(kairov1alpha1.PartitionOffsetStatus{Topic: topic, Partition: 0,
			CommittedOffset: -1, HighWatermark: 3, Lag: 3}))
		Expect(offsetOf(cg, topic, 1).Lag).To(Equal(int64(2)))
		Expect(cg.Status.TotalLag).To(Equal(int64(5)))

		By("a consumer joining and committing")
		c := join(bc, name, topic)
		c.commit(topic, 0, 2)
		c.commit(topic, 1, 2)
		cg = eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(cg.Status.TotalLag).To(Equal(int64(1)))
			g.Expect(cg.Status.MemberCount).To(Equal(int32(1)))
		})
		Expect(cg.Status.State).To(Equal("Stable"))
		Expect(cg.Status.Generation).To(Equal(c.generation))
		Expect(cg.Status.Members).To(HaveLen(1))
		m := cg.Status.Members[0]
		Expect(m.ID).To(Equal(c.id))
		Expect(m.ClientID).To(Equal("spec-consumer"))
		Expect(m.LastSeen).NotTo(BeNil())
		Expect(m.Assignment).To(Equal([]kairov1alpha1.TopicPartitions{{Topic: topic, Partitions: []int32{0, 1}}}))
		Expect(offsetOf(cg, topic, 0)).To(Equal(kairov1alpha1.PartitionOffsetStatus{Topic: topic, Partition: 0,
			CommittedOffset: 2, HighWatermark: 3, Lag: 1}))

		By("records produced behind the consumer")
		produce(bc, topic, 1, 4)
		eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(cg.Status.TotalLag).To(Equal(int64(5)))
			g.Expect(offsetOf(cg, topic, 1).HighWatermark).To(Equal(int64(6)))
		})
		c.leave()
		eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(cg.Status.MemberCount).To(BeZero())
			g.Expect(cg.Status.Members).To(BeEmpty())
			g.Expect(cg.Status.State).To(Equal("Empty"))
		})
	})

	It("reports a topic of spec.topics that does not exist", func() {
		name := uniqueName("lost")
		createGroup(name, clusterName, func(g *kairov1alpha1.ConsumerGroup) { g.Spec.Topics = []string{"no-such-topic"} })
		cg := eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonTopicNotFound))
		})
		Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady).Message).To(ContainSubstring("no-such-topic"))
	})

	It("makes the brokers enforce the session timeout and assignment strategy, and sets drift back", func() {
		topic := createBrokerTopic(bc, 2)
		name := uniqueName("strict")
		createGroup(name, clusterName, func(g *kairov1alpha1.ConsumerGroup) {
			g.Spec.Topics = []string{topic}
			g.Spec.SessionTimeout = &metav1.Duration{Duration: 2 * time.Second}
			g.Spec.AssignmentStrategy = kairov1alpha1.AssignmentRoundRobin
		})
		eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, ReasonConfigured))
		})
		d, err := bc.DescribeGroup(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.SessionTimeoutMs).To(Equal(int64(2000)))
		Expect(d.AssignmentStrategy).To(Equal("roundrobin"))
		expectEvent(groupNamespace, name, ReasonGroupConfigured)

		By("a member that asked for five minutes but stops heartbeating is removed after two seconds")
		c := join(bc, name, topic)
		joined := time.Now()
		Eventually(func(g Gomega) {
			d, err := bc.DescribeGroup(ctx, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Members).To(BeEmpty())
		}).WithTimeout(10 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
		Expect(time.Since(joined)).To(BeNumerically("<", 6*time.Second))
		_ = c

		By("config changed on the brokers out of band")
		_, err = bc.SetGroupConfig(ctx, api.GroupConfig{Group: name, SessionTimeoutMs: 60000, AssignmentStrategy: "range"})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			d, err := bc.DescribeGroup(ctx, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.SessionTimeoutMs).To(Equal(int64(2000)))
			g.Expect(d.AssignmentStrategy).To(Equal("roundrobin"))
		}).WithTimeout(4 * testResync).WithPolling(100 * time.Millisecond).Should(Succeed())
		expectEvent(groupNamespace, name, ReasonGroupConfigDriftReverted)

		By("the spec dropping its session timeout, which returns the group to the brokers' default")
		Expect(updateGroup(name, func(g *kairov1alpha1.ConsumerGroup) { g.Spec.SessionTimeout = nil })).To(Succeed())
		Eventually(func(g Gomega) {
			d, err := bc.DescribeGroup(ctx, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.SessionTimeoutMs).To(Equal(testBrokerSettings().GroupStaleTimeout.Milliseconds()))
			g.Expect(d.AssignmentStrategy).To(Equal("roundrobin"))
		}).WithTimeout(10 * time.Second).Should(Succeed())
	})

	It("applies an offset reset once, only after the active members leave", func() {
		topic := createBrokerTopic(bc, 1)
		var ts []int64
		for i := range 10 {
			ts = append(ts, int64(i+1)*1000) // record i was written at second i+1 of 1970
		}
		produce(bc, topic, 0, 10, ts...)
		name := uniqueName("replay")
		c := join(bc, name, topic)
		c.commit(topic, 0, 10)
		createGroup(name, clusterName, func(g *kairov1alpha1.ConsumerGroup) { g.Spec.Topics = []string{topic} })
		eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(cg.Status.MemberCount).To(Equal(int32(1)))
			g.Expect(cg.Status.TotalLag).To(BeZero())
		})

		By("asking for a reset while a consumer is active")
		Expect(updateGroup(name, func(g *kairov1alpha1.ConsumerGroup) {
			g.Spec.OffsetReset = &kairov1alpha1.OffsetReset{RequestID: "r1", To: kairov1alpha1.ResetToEarliest}
		})).To(Succeed())
		cg := eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonOffsetResetPending))
		})
		Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady).Message).To(ContainSubstring("1 active members"))
		Expect(cg.Status.LastOffsetReset).To(BeNil())
		expectEvent(groupNamespace, name, ReasonOffsetResetPending)
		Consistently(func(g Gomega) {
			offset, _, err := bc.Offset(ctx, name, topic, 0)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(offset).To(Equal(int64(10)))
		}).WithTimeout(2 * testResync).Should(Succeed())

		By("the consumer leaving")
		c.leave()
		cg = eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(cg.Status.LastOffsetReset).NotTo(BeNil())
			g.Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		})
		Expect(cg.Status.LastOffsetReset.RequestID).To(Equal("r1"))
		Expect(cg.Status.LastOffsetReset.Result).To(Equal(offsetResetApplied))
		Expect(cg.Status.LastOffsetReset.Message).To(ContainSubstring("moved 1 partitions of " + topic + " to earliest"))
		Expect(offsetOf(cg, topic, 0).CommittedOffset).To(BeZero())
		Expect(cg.Status.TotalLag).To(Equal(int64(10)))
		expectEvent(groupNamespace, name, ReasonOffsetResetApplied)

		By("a consumer committing after the reset, which the same request does not undo")
		c = join(bc, name, topic)
		c.commit(topic, 0, 7)
		c.leave()
		Consistently(func(g Gomega) {
			offset, _, err := bc.Offset(ctx, name, topic, 0)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(offset).To(Equal(int64(7)))
		}).WithTimeout(2*testResync + time.Second).Should(Succeed())

		By("new requests: to a timestamp, to an offset, to the latest")
		for _, step := range []struct {
			reset kairov1alpha1.OffsetReset
			want  int64
		}{
			{kairov1alpha1.OffsetReset{RequestID: "r2", To: kairov1alpha1.ResetToTimestamp,
				Timestamp: &metav1.Time{Time: time.UnixMilli(6000)}}, 5},
			{kairov1alpha1.OffsetReset{RequestID: "r3", To: kairov1alpha1.ResetToOffset, Offset: ptr.To(int64(3))}, 3},
			{kairov1alpha1.OffsetReset{RequestID: "r4", To: kairov1alpha1.ResetToLatest}, 10},
		} {
			Expect(updateGroup(name, func(g *kairov1alpha1.ConsumerGroup) { g.Spec.OffsetReset = &step.reset })).To(Succeed())
			cg = eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
				g.Expect(cg.Status.LastOffsetReset).NotTo(BeNil())
				g.Expect(cg.Status.LastOffsetReset.RequestID).To(Equal(step.reset.RequestID))
				g.Expect(offsetOf(cg, topic, 0).CommittedOffset).To(Equal(step.want))
			})
			Expect(cg.Status.LastOffsetReset.Result).To(Equal(offsetResetApplied))
		}

		By("a request the brokers refuse, recorded as Failed and not retried")
		Expect(updateGroup(name, func(g *kairov1alpha1.ConsumerGroup) {
			g.Spec.OffsetReset = &kairov1alpha1.OffsetReset{RequestID: "r5", To: kairov1alpha1.ResetToEarliest,
				Topics: []string{"no-such-topic"}}
		})).To(Succeed())
		cg = eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(cg.Status.LastOffsetReset.RequestID).To(Equal("r5"))
		})
		Expect(cg.Status.LastOffsetReset.Result).To(Equal(offsetResetFailed))
		Expect(cg.Status.LastOffsetReset.Message).To(ContainSubstring("no-such-topic"))
		expectEvent(groupNamespace, name, ReasonOffsetResetFailed)
		u, _ := url.Parse(brokers[0].url)
		mark := brokerCalls.mark()
		time.Sleep(2 * testResync)
		Expect(brokerCalls.count(mark, toPath(u.Host, "/groups/"+name+"/reset-offsets"))).To(BeZero())
	})

	It("deletes committed offsets with deletionPolicy Delete, waiting for members, and keeps them with Retain", func() {
		topic := createBrokerTopic(bc, 1)
		produce(bc, topic, 0, 3)

		By("Retain, the default: no finalizer, offsets stay")
		kept := uniqueName("kept")
		Expect(bc.CommitOffset(ctx, kept, topic, 0, 2)).To(Succeed())
		g1 := createGroup(kept, clusterName, func(g *kairov1alpha1.ConsumerGroup) { g.Spec.Topics = []string{topic} })
		eventuallyGroup(kept, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(cg.Finalizers).To(BeEmpty())
		})
		Expect(k8sClient.Delete(ctx, g1)).To(Succeed())
		expectGone(g1, 20*time.Second)
		_, found, err := bc.Offset(ctx, kept, topic, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue())

		By("Delete while a consumer is active")
		dropped := uniqueName("dropped")
		c := join(bc, dropped, topic)
		c.commit(topic, 0, 1)
		g2 := createGroup(dropped, clusterName, func(g *kairov1alpha1.ConsumerGroup) {
			g.Spec.Topics = []string{topic}
			g.Spec.DeletionPolicy = kairov1alpha1.DeletionPolicyDelete
		})
		eventuallyGroup(dropped, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(controllerutil.ContainsFinalizer(cg, kairov1alpha1.FinalizerName)).To(BeTrue())
			g.Expect(cg.Status.MemberCount).To(Equal(int32(1)))
		})
		Expect(k8sClient.Delete(ctx, g2)).To(Succeed())
		eventuallyGroup(dropped, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonGroupNotEmpty))
		})
		expectEvent(groupNamespace, dropped, ReasonGroupNotEmpty)
		_, found, err = bc.Offset(ctx, dropped, topic, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue())

		c.leave()
		expectGone(g2, 20*time.Second)
		expectEvent(groupNamespace, dropped, ReasonGroupDeleted)
		_, found, err = bc.Offset(ctx, dropped, topic, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeFalse(), "the committed offsets are gone")
		_, err = bc.DescribeGroup(ctx, dropped)
		Expect(api.IsCode(err, api.CodeUnknownGroup)).To(BeTrue(), "describe after delete: %v", err)
	})

	It("releases the finalizer when the KairoCluster is gone, leaving the offsets", func() {
		topic := createBrokerTopic(bc, 1)
		doomed := uniqueName("doomed")
		kc := createCluster(groupNamespace, doomed, brokers[0].url)
		name := uniqueName("orphaned")
		Expect(bc.CommitOffset(ctx, name, topic, 0, 0)).To(Succeed())
		cg := createGroup(name, doomed, func(g *kairov1alpha1.ConsumerGroup) {
			g.Spec.DeletionPolicy = kairov1alpha1.DeletionPolicyDelete
		})
		eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(controllerutil.ContainsFinalizer(cg, kairov1alpha1.FinalizerName)).To(BeTrue())
			g.Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		})
		Expect(k8sClient.Delete(ctx, kc)).To(Succeed())
		expectGone(kc, 20*time.Second)
		eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonClusterNotReady))
		})
		Expect(k8sClient.Delete(ctx, cg)).To(Succeed())
		expectGone(cg, 20*time.Second)
		expectEvent(groupNamespace, name, ReasonFinalizerReleased)
		_, found, err := bc.Offset(ctx, name, topic, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue())
	})

	It("lets the older of two ConsumerGroups naming one group act; the newer reports Conflict", func() {
		shared := uniqueName("shared")
		first := createGroup(uniqueName("first"), clusterName, func(g *kairov1alpha1.ConsumerGroup) { g.Spec.GroupID = shared })
		eventuallyGroup(first.Name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		})
		time.Sleep(1100 * time.Millisecond)
		second := createGroup(uniqueName("second"), clusterName, func(g *kairov1alpha1.ConsumerGroup) {
			g.Spec.GroupID = shared
			g.Spec.AssignmentStrategy = kairov1alpha1.AssignmentRoundRobin
		})
		cg := eventuallyGroup(second.Name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonConflict))
		})
		Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady).Message).To(ContainSubstring(first.Name))
		d, err := bc.DescribeGroup(ctx, shared)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.AssignmentStrategy).To(Equal("range"), "the newer resource does not configure the group")

		Expect(k8sClient.Delete(ctx, first)).To(Succeed())
		expectGone(first, 20*time.Second)
		eventuallyGroup(second.Name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		})
		Eventually(func(g Gomega) {
			d, err := bc.DescribeGroup(ctx, shared)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.AssignmentStrategy).To(Equal("roundrobin"))
		}).WithTimeout(10 * time.Second).Should(Succeed())
	})

	It("reports unreachable brokers with ClusterNotReady and backs off", func() {
		endpoint := closedEndpoint()
		away := uniqueName("away")
		cleanUpCluster(createCluster(groupNamespace, away, endpoint))
		name := uniqueName("unreached")
		createGroup(name, away, nil)
		cg := eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonClusterNotReady))
		})
		Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady).Message).To(ContainSubstring("unreachable"))
		expectEvent(groupNamespace, name, ReasonClusterNotReady)
		u, err := url.Parse(endpoint)
		Expect(err).NotTo(HaveOccurred())
		mark := brokerCalls.mark()
		time.Sleep(10 * time.Second)
		Expect(brokerCalls.count(mark, toHost(u.Host))).To(BeNumerically("<=", 5))
		Expect(managerCalls.count(0, writesTo("consumergroups", client.ObjectKeyFromObject(cg)))).To(BeNumerically("<=", 2))
	})

	It("writes no status and asks the brokers at most once per resync while the group is idle", func() {
		topic := createBrokerTopic(bc, 3)
		produce(bc, topic, 0, 5)
		name := uniqueName("quiet")
		Expect(bc.CommitOffset(ctx, name, topic, 0, 4)).To(Succeed())
		createGroup(name, clusterName, func(g *kairov1alpha1.ConsumerGroup) { g.Spec.Topics = []string{topic} })
		eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(cg.Status.TotalLag).To(Equal(int64(1)))
		})
		time.Sleep(testResync)
		host := brokers[0].host
		key := types.NamespacedName{Namespace: groupNamespace, Name: name}
		brokerMark, apiMark := brokerCalls.mark(), managerCalls.mark()
		window := 3*testResync + testResync/2
		time.Sleep(window)
		Expect(managerCalls.count(apiMark, writesTo("consumergroups", key))).To(BeZero())
		n := brokerCalls.count(brokerMark, underPath(host, "/groups/"+name))
		Expect(n).To(BeNumerically("<=", int(window/testResync)+1))
		Expect(n).To(BeNumerically(">=", 2))

		By("writing status when lag moves")
		produce(bc, topic, 2, 3)
		eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(cg.Status.TotalLag).To(Equal(int64(4)))
		})
	})
})
