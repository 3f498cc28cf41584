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

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	brokerclient "github.com/kairolog/kairolog/broker/client"
)

// TopicReconciler keeps a topic on a KairoCluster's brokers in line with a
// Topic resource: it creates or adopts the topic, raises its partitions,
// sets its config and replication factor back to the spec, reports what the
// brokers hold in status, and deletes the topic through a finalizer when the
// deletion policy says so.
type TopicReconciler = brokerObjectReconciler[*kairov1alpha1.Topic, kairov1alpha1.TopicStatus, topicKind]

// topicObjectPass is one reconcile of one Topic, as the shared reconciler runs it.
type topicObjectPass = objectPass[*kairov1alpha1.Topic, kairov1alpha1.TopicStatus]

// topicKind is what a Topic adds to the shared reconciler; topic_pass.go
// holds its work on the brokers.
type topicKind struct{}

func (topicKind) terms() kindTerms {
	return kindTerms{kind: "Topic", controller: "topic", noun: "Topic",
		kept: "topic %q", keptVerb: "was", keptAgain: "it was", retained: ReasonTopicRetained,
		// Creating many Topics at once goes as fast as the brokers create
		// topics, and a broker opens the replicas of all the creations
		// that reach it while it opens earlier ones in one go: more
		// creations in flight are more topics a second (1000 Topics at
		// RF 3 on two loaded cores: 76 s with 16, 41 s with 64; see
		// docs/benchmarks.md). A reconcile mostly waits, holding a
		// goroutine and a connection to a broker.
		workers: 64}
}

func (topicKind) newObject() *kairov1alpha1.Topic           { return &kairov1alpha1.Topic{} }
func (topicKind) newList() client.ObjectList                { return &kairov1alpha1.TopicList{} }
func (topicKind) clusterName(t *kairov1alpha1.Topic) string { return t.Spec.ClusterRef.Name }

// brokerName is the topic's name on the brokers.
func (topicKind) brokerName(t *kairov1alpha1.Topic) string { return topicName(t) }

func (topicKind) status(t *kairov1alpha1.Topic) *kairov1alpha1.TopicStatus { return &t.Status }

func (topicKind) common(st *kairov1alpha1.TopicStatus) commonStatus {
	return commonStatus{conditions: &st.Conditions, observedGeneration: &st.ObservedGeneration, name: &st.TopicName}
}

// retains: a Topic deletes its topic unless told to retain it.
func (topicKind) retains(t *kairov1alpha1.Topic) bool {
	return t.Spec.DeletionPolicy == kairov1alpha1.DeletionPolicyRetain
}

func (topicKind) ensure(ctx context.Context, p *topicObjectPass, bc *brokerclient.Client) (ctrl.Result, error) {
	return newTopicPass(p, bc).ensure(ctx)
}

func (topicKind) forget(st *kairov1alpha1.TopicStatus) { forgetTopic(st) }

func (topicKind) delete(ctx context.Context, p *topicObjectPass) (ctrl.Result, error) {
	// A topic this resource never created or adopted is not its to delete.
	if p.status.TopicID == "" {
		return p.release(ctx, corev1.EventTypeNormal, ReasonTopicRetained,
			"This resource never created or adopted topic %q; it was left on the brokers", p.name)
	}
	bc, end := p.connect()
	if end != nil {
		return end.res, end.err
	}
	return newTopicPass(p, bc).delete(ctx)
}

// topicName is the topic's name on the brokers.
func topicName(t *kairov1alpha1.Topic) string {
	if t.Spec.TopicName != "" {
		return t.Spec.TopicName
	}
	return t.Name
}
