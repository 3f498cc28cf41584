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

// brokerobject_claims.go decides which resource manages a name on the
// brokers when several Topics (or ConsumerGroups) of one cluster claim it,
// and which changes of a KairoCluster or of a claimant wake the others.

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// claimKey is the index value of a broker-side object: two resources with
// the same key manage the same topic or group.
func claimKey(cluster, name string) string { return cluster + "/" + name }

// olderThan orders resources by age: creation time, then name, then UID, so
// every reconcile picks the same owner among claimants created in the same
// second.
func olderThan(a, b metav1.Object) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	if a.GetName() != b.GetName() {
		return a.GetName() < b.GetName()
	}
	return a.GetUID() < b.GetUID()
}

// oldestLive returns the oldest of claimants that is not being deleted,
// leaving out the one with UID except, or nil. With no exception it is the
// owner: the one resource that acts on the brokers.
func oldestLive(claimants []metav1.Object, except types.UID) metav1.Object {
	var best metav1.Object
	for _, c := range claimants {
		if c.GetDeletionTimestamp() != nil || (except != "" && c.GetUID() == except) {
			continue
		}
		if best == nil || olderThan(c, best) {
			best = c
		}
	}
	return best
}

// clusterChanged passes the KairoCluster changes that matter to the
// resources on it: created or deleted, deletion started, another broker
// endpoint, or Ready turning True or False. Status churn on the cluster
// does not wake a thousand topics.
var clusterChanged = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return true },
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		oldC, ok1 := e.ObjectOld.(*kairov1alpha1.KairoCluster)
		newC, ok2 := e.ObjectNew.(*kairov1alpha1.KairoCluster)
		if !ok1 || !ok2 {
			return false
		}
		if (oldC.DeletionTimestamp == nil) != (newC.DeletionTimestamp == nil) {
			return true
		}
		if BrokerEndpoint(oldC) != BrokerEndpoint(newC) {
			return true
		}
		return readyStatus(oldC.Status.Conditions) != readyStatus(newC.Status.Conditions)
	},
}

func readyStatus(conds []metav1.Condition) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(conds, kairov1alpha1.ConditionReady); c != nil {
		return c.Status
	}
	return metav1.ConditionUnknown
}

// claimantsChanged passes the events of a Topic or ConsumerGroup that can
// change which resource owns its broker-side name: created, deleted, or its
// deletion started.
var claimantsChanged = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return true },
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return (e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
	},
}

// requestsFor turns a list of objects into reconcile requests, leaving out
// skip (the object whose event this is: its own watch enqueues it).
func requestsFor(objs []metav1.Object, skip types.UID) []reconcile.Request {
	var out []reconcile.Request
	for _, o := range objs {
		if o.GetUID() == skip {
			continue
		}
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}})
	}
	return out
}
