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

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	brokerclient "github.com/kairolog/kairolog/broker/client"
)

// ConsumerGroupReconciler observes a consumer group on a KairoCluster's
// brokers — state, members, committed offsets and lag — and acts on it only
// where the ConsumerGroup asks: the group's session timeout and assignment
// strategy, one-shot offset resets, and deleting the committed offsets when
// the resource goes and the deletion policy says so. Consumers create
// groups; this reconciler never adds or removes members.
type ConsumerGroupReconciler = brokerObjectReconciler[*kairov1alpha1.ConsumerGroup, kairov1alpha1.ConsumerGroupStatus, groupKind]

// groupObjectPass is one reconcile of one ConsumerGroup, as the shared
// reconciler runs it.
type groupObjectPass = objectPass[*kairov1alpha1.ConsumerGroup, kairov1alpha1.ConsumerGroupStatus]

// groupKind is what a ConsumerGroup adds to the shared reconciler;
// consumergroup_pass.go holds its work on the brokers.
type groupKind struct{}

func (groupKind) terms() kindTerms {
	return kindTerms{kind: "ConsumerGroup", controller: "consumergroup", noun: "Group",
		kept: "the offsets of group %q", keptVerb: "were", keptAgain: "its offsets were", retained: ReasonGroupRetained,
		workers: 4}
}

func (groupKind) newObject() *kairov1alpha1.ConsumerGroup { return &kairov1alpha1.ConsumerGroup{} }
func (groupKind) newList() client.ObjectList              { return &kairov1alpha1.ConsumerGroupList{} }

func (groupKind) clusterName(g *kairov1alpha1.ConsumerGroup) string { return g.Spec.ClusterRef.Name }

// brokerName is the group's id on the brokers.
func (groupKind) brokerName(g *kairov1alpha1.ConsumerGroup) string { return groupID(g) }

func (groupKind) status(g *kairov1alpha1.ConsumerGroup) *kairov1alpha1.ConsumerGroupStatus {
	return &g.Status
}

func (groupKind) common(st *kairov1alpha1.ConsumerGroupStatus) commonStatus {
	return commonStatus{conditions: &st.Conditions, observedGeneration: &st.ObservedGeneration, name: &st.GroupID}
}

// retains: a ConsumerGroup keeps the group's offsets unless told to delete them.
func (groupKind) retains(g *kairov1alpha1.ConsumerGroup) bool {
	return g.Spec.DeletionPolicy != kairov1alpha1.DeletionPolicyDelete
}

func (groupKind) ensure(ctx context.Context, p *groupObjectPass, bc *brokerclient.Client) (ctrl.Result, error) {
	return newGroupPass(p, bc).ensure(ctx)
}

func (groupKind) forget(st *kairov1alpha1.ConsumerGroupStatus) { forgetGroup(st) }

func (groupKind) delete(ctx context.Context, p *groupObjectPass) (ctrl.Result, error) {
	bc, end := p.connect()
	if end != nil {
		return end.res, end.err
	}
	return newGroupPass(p, bc).delete(ctx)
}

// groupID is the group's id on the brokers.
func groupID(g *kairov1alpha1.ConsumerGroup) string {
	if g.Spec.GroupID != "" {
		return g.Spec.GroupID
	}
	return g.Name
}
