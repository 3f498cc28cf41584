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

// brokerobject.go holds what the Topic and ConsumerGroup reconcilers share: both
// manage one object on the brokers of a referenced KairoCluster, so both look
// the cluster up the same way, decide which resource owns a broker-side name
// when two claim it, classify broker errors, and write status only when it
// changed.

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	brokerclient "github.com/kairolog/kairolog/broker/client"
)

// Field indexes the reconcilers register. The names are specific so that
// other controllers in the manager can index the same kinds.
const (
	topicClusterIndex = "kairolog.io/topic-cluster"
	topicClaimIndex   = "kairolog.io/topic-claim"
	groupClusterIndex = "kairolog.io/consumergroup-cluster"
	groupClaimIndex   = "kairolog.io/consumergroup-claim"
)

// lookupCluster returns the KairoCluster a Topic or ConsumerGroup references,
// or nil when it does not exist.
func lookupCluster(ctx context.Context, c client.Reader, namespace, name string) (*kairov1alpha1.KairoCluster, error) {
	var cluster kairov1alpha1.KairoCluster
	err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &cluster)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &cluster, nil
}

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

// owner returns the oldest of claimants that is not being deleted, or nil.
func owner(claimants []metav1.Object) metav1.Object {
	var best metav1.Object
	for _, c := range claimants {
		if c.GetDeletionTimestamp() != nil {
			continue
		}
		if best == nil || olderThan(c, best) {
			best = c
		}
	}
	return best
}

// otherLiveClaimant returns a claimant other than self that is not being
// deleted, or nil.
func otherLiveClaimant(claimants []metav1.Object, self metav1.Object) metav1.Object {
	var best metav1.Object
	for _, c := range claimants {
		if c.GetUID() == self.GetUID() || c.GetDeletionTimestamp() != nil {
			continue
		}
		if best == nil || olderThan(c, best) {
			best = c
		}
	}
	return best
}

// brokerFailure is a broker call that failed, sorted for the Ready condition.
type brokerFailure struct {
	// reason is ClusterNotReady (unreachable, not ready) or BrokerError.
	reason string
	// message is what the condition says.
	message string
	// transient failures are retried with backoff; the others wait for the
	// next resync or a spec change, since repeating the call cannot help.
	transient bool
}

// classify sorts a broker call's error. Transport errors and 503s mean the
// brokers cannot answer now; other error replies are the brokers refusing
// the request.
func classify(cluster *kairov1alpha1.KairoCluster, what string, err error) brokerFailure {
	var be *brokerclient.Error
	if !errors.As(err, &be) {
		return brokerFailure{reason: ReasonClusterNotReady, transient: true,
			message: fmt.Sprintf("Brokers of KairoCluster %q unreachable at %s: %s: %v", cluster.Name, BrokerEndpoint(cluster), what, err)}
	}
	switch {
	case be.Code == brokerclient.CodeNotReady || be.Code == brokerclient.CodeBrokerUnavailable:
		return brokerFailure{reason: ReasonClusterNotReady, transient: true,
			message: fmt.Sprintf("Brokers of KairoCluster %q are not ready: %s: %v", cluster.Name, what, err)}
	case be.Status >= http.StatusInternalServerError, be.Code == brokerclient.CodeTopicDeletionInProgress,
		be.Code == brokerclient.CodeReassignmentInProgress:
		return brokerFailure{reason: ReasonBrokerError, transient: true,
			message: fmt.Sprintf("%s: %v", what, err)}
	case be.Code == brokerclient.CodeNotFound || be.Code == brokerclient.CodeMethodNotAllowed:
		// The path itself is unknown: a broker older than this operator.
		return brokerFailure{reason: ReasonNotSupported,
			message: fmt.Sprintf("The brokers do not support this operation: %s: %v", what, err)}
	}
	return brokerFailure{reason: ReasonBrokerError, message: fmt.Sprintf("%s: %v", what, err)}
}

// errBrokerRetry is returned from Reconcile after a transient broker
// failure so that the controller's rate limiter spaces the retries; the
// failure itself is already in the Ready condition.
type errBrokerRetry struct{ msg string }

func (e errBrokerRetry) Error() string { return e.msg }

// setReady sets the Ready condition and reports whether its status or reason
// changed, which is when an event is worth sending.
func setReady(conds *[]metav1.Condition, generation int64, status metav1.ConditionStatus, reason, message string) bool {
	old := meta.FindStatusCondition(*conds, kairov1alpha1.ConditionReady)
	changed := old == nil || old.Status != status || old.Reason != reason
	meta.SetStatusCondition(conds, metav1.Condition{Type: kairov1alpha1.ConditionReady, Status: status,
		Reason: reason, Message: message, ObservedGeneration: generation})
	return changed
}

// readyReason is the reason of the Ready condition when it is True, else "".
func readyReason(conds []metav1.Condition) string {
	c := meta.FindStatusCondition(conds, kairov1alpha1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionTrue {
		return ""
	}
	return c.Reason
}

// setFinalizer adds or removes the finalizer with an optimistic-lock patch,
// so a concurrent change to the object's finalizers is never lost.
func setFinalizer(ctx context.Context, c client.Client, obj client.Object, want bool) error {
	if controllerutil.ContainsFinalizer(obj, kairov1alpha1.FinalizerName) == want {
		return nil
	}
	base := obj.DeepCopyObject().(client.Object)
	if want {
		controllerutil.AddFinalizer(obj, kairov1alpha1.FinalizerName)
	} else {
		controllerutil.RemoveFinalizer(obj, kairov1alpha1.FinalizerName)
	}
	return c.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
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
