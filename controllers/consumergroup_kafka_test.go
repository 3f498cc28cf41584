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
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kgo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// kafkaConsumer is a kgo consumer of a group that commits what it reads.
type kafkaConsumer struct {
	cl   *kgo.Client
	stop context.CancelFunc
	done chan struct{}
}

func startKafkaConsumer(addr, group, topic string) *kafkaConsumer {
	GinkgoHelper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("kgo-spec"), kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	c := &kafkaConsumer{cl: cl, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
			_ = cl.CommitUncommittedOffsets(ctx)
		}
	}()
	return c
}

func (c *kafkaConsumer) close() {
	c.stop()
	<-c.done
	c.cl.Close()
}

var _ = Describe("ConsumerGroup of Kafka consumers", Ordered, func() {
	var brokers []*testBroker
	const clusterName = "kairo-kafka"

	BeforeAll(func() {
		ensureNamespace(groupNamespace)
		brokers = startBrokers(1)
		cleanUpCluster(createCluster(groupNamespace, clusterName, brokers[0].url))
	})

	It("reports the members, the partitions their leader gave them, and their lag", func() {
		bc := brokers[0].client()
		topic := createBrokerTopic(bc, 4)
		for p := range int32(4) {
			produce(bc, topic, p, 3)
		}
		name := uniqueName("kafka-readers")
		createGroup(name, clusterName, func(g *kairov1alpha1.ConsumerGroup) { g.Spec.Topics = []string{topic} })

		consumers := []*kafkaConsumer{
			startKafkaConsumer(brokers[0].KafkaAddress, name, topic),
			startKafkaConsumer(brokers[0].KafkaAddress, name, topic),
		}
		defer func() {
			for _, c := range consumers {
				c.close()
			}
		}()
		cg := eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(cg.Status.State).To(Equal("Stable"))
			g.Expect(cg.Status.MemberCount).To(Equal(int32(2)))
			g.Expect(cg.Status.TotalLag).To(BeZero())
			var assigned []int32
			for _, m := range cg.Status.Members {
				for _, tp := range m.Assignment {
					assigned = append(assigned, tp.Partitions...)
				}
			}
			slices.Sort(assigned)
			g.Expect(assigned).To(Equal([]int32{0, 1, 2, 3}))
		})
		var ids []string
		for _, c := range consumers {
			id, _ := c.cl.GroupMetadata()
			ids = append(ids, id)
		}
		for _, m := range cg.Status.Members {
			Expect(ids).To(ContainElement(m.ID))
			Expect(m.ClientID).To(Equal("kgo-spec"))
			Expect(m.Assignment).To(HaveLen(1))
			Expect(m.Assignment[0].Topic).To(Equal(topic))
		}
		for p := range int32(4) {
			Expect(offsetOf(cg, topic, p).CommittedOffset).To(Equal(int64(3)))
		}
	})

	It("applies an offset reset to a group of Kafka consumers once they leave, and the next consumer reads again", func() {
		bc := brokers[0].client()
		topic := createBrokerTopic(bc, 2)
		for p := range int32(2) {
			produce(bc, topic, p, 5)
		}
		name := uniqueName("kafka-replay")
		createGroup(name, clusterName, func(g *kairov1alpha1.ConsumerGroup) { g.Spec.Topics = []string{topic} })

		consumer := startKafkaConsumer(brokers[0].KafkaAddress, name, topic)
		eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(cg.Status.MemberCount).To(Equal(int32(1)))
			g.Expect(offsetOf(cg, topic, 0).CommittedOffset).To(Equal(int64(5)))
			g.Expect(offsetOf(cg, topic, 1).CommittedOffset).To(Equal(int64(5)))
		})

		By("asking for a reset while the Kafka consumer is a member")
		Expect(updateGroup(name, func(g *kairov1alpha1.ConsumerGroup) {
			g.Spec.OffsetReset = &kairov1alpha1.OffsetReset{RequestID: "k1", To: kairov1alpha1.ResetToEarliest}
		})).To(Succeed())
		eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(condition(cg.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonOffsetResetPending))
		})

		By("the consumer leaving the group (kgo sends LeaveGroup on close)")
		consumer.close()
		cg := eventuallyGroup(name, func(g Gomega, cg *kairov1alpha1.ConsumerGroup) {
			g.Expect(cg.Status.LastOffsetReset).NotTo(BeNil())
		})
		Expect(cg.Status.LastOffsetReset.RequestID).To(Equal("k1"))
		Expect(cg.Status.LastOffsetReset.Result).To(Equal(offsetResetApplied))
		Expect(offsetOf(cg, topic, 0).CommittedOffset).To(BeZero())
		Expect(offsetOf(cg, topic, 1).CommittedOffset).To(BeZero())
		Expect(cg.Status.TotalLag).To(Equal(int64(10)))

		By("a new Kafka consumer of the group starting from the reset offsets")
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers[0].KafkaAddress), kgo.ConsumerGroup(name),
			kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()), kgo.DisableAutoCommit())
		Expect(err).NotTo(HaveOccurred())
		defer cl.Close()
		read := map[int32]int64{}
		pollCtx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		for read[0]+read[1] < 10 && pollCtx.Err() == nil {
			cl.PollFetches(pollCtx).EachRecord(func(r *kgo.Record) {
				Expect(r.Offset).To(Equal(read[r.Partition]), "partition %d read out of order", r.Partition)
				read[r.Partition]++
			})
		}
		// Its start position is "end" for a group without commits: reading
		// all ten means it started at the offsets the reset committed.
		Expect(read).To(Equal(map[int32]int64{0: 5, 1: 5}))
	})
})
