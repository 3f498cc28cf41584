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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kgo"

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
})
