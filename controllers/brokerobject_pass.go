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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	brokerclient "github.com/kairolog/kairolog/broker/client"
)

// objectPass is one reconcile of one resource: what was read at its start
// and the status it builds. A Kind's ensure and delete work on it.
type objectPass[T client.Object, S any] struct {
	// What the reconciler lends the pass.
	kind     objectKind[T, S]
	client   client.Client
	recorder events.EventRecorder
	brokers  BrokerClients
	resync   time.Duration

	obj       T
	cluster   *kairov1alpha1.KairoCluster
	claimants []metav1.Object
	// name is the object's name on the brokers.
	name string
	// status is the status this pass writes if it differs from the stored one.
	status S
	// released is set once the finalizer is gone: the resource may be too.
	released bool
}

// passEnd ends a pass early with this result.
type passEnd struct {
	res ctrl.Result
	err error
}

func endWith(res ctrl.Result, err error) *passEnd { return &passEnd{res: res, err: err} }

func (p *objectPass[T, S]) common() commonStatus { return p.kind.common(&p.status) }

func (p *objectPass[T, S]) generation() int64 { return p.obj.GetGeneration() }

// reconcile runs the steps every Kind shares, in order, then the Kind's
// ensure. It stops at the first step that cannot go on and says why in
// the Ready condition.
func (p *objectPass[T, S]) reconcile(ctx context.Context) (ctrl.Result, error) {
	k := p.kind
	*p.common().name = p.name
	if p.cluster == nil {
		return p.waitForCluster(fmt.Sprintf("KairoCluster %q does not exist", k.clusterName(p.obj)))
	}
	if p.cluster.DeletionTimestamp != nil {
		return p.waitForCluster(fmt.Sprintf("KairoCluster %q is being deleted", k.clusterName(p.obj)))
	}
	if o := oldestLive(p.claimants, ""); o != nil && o.GetUID() != p.obj.GetUID() {
		return p.conflict(o)
	}
	if err := setFinalizer(ctx, p.client, p.obj, !k.retains(p.obj)); err != nil {
		return ctrl.Result{}, err
	}
	bc, end := p.connect()
	if end != nil {
		return end.res, end.err
	}
	return k.ensure(ctx, p, bc)
}

// connect returns a client for the cluster's brokers, or ends the pass
// with Ready False when there is none.
func (p *objectPass[T, S]) connect() (*brokerclient.Client, *passEnd) {
	bc, err := p.brokers.For(p.cluster)
	if err != nil {
		return nil, endWith(p.failed(brokerFailure{reason: ReasonClusterNotReady,
			message: fmt.Sprintf("No client for the brokers of KairoCluster %q: %v", p.cluster.Name, err)}))
	}
	return bc, nil
}

// waitForCluster ends a pass that cannot reach any broker because the
// cluster is missing or going away. The cluster watch wakes the resource
// when that changes.
func (p *objectPass[T, S]) waitForCluster(message string) (ctrl.Result, error) {
	p.setReady(metav1.ConditionFalse, ReasonClusterNotReady, corev1.EventTypeWarning, message)
	return p.resyncLater()
}

// conflict ends the pass of a resource that names an object an older
// resource manages. It never calls the brokers.
func (p *objectPass[T, S]) conflict(o metav1.Object) (ctrl.Result, error) {
	k := p.kind
	t := k.terms()
	k.forget(&p.status)
	*p.common().observedGeneration = p.generation()
	p.setReady(metav1.ConditionFalse, ReasonConflict, corev1.EventTypeWarning, fmt.Sprintf(
		"%s %q on KairoCluster %q is managed by the older %s %q", t.noun, p.name, k.clusterName(p.obj), t.kind, o.GetName()))
	return p.resyncLater()
}

// failed records a failed broker call. Transient failures return an error
// so the rate limiter backs off; the others wait for the next resync.
func (p *objectPass[T, S]) failed(f brokerFailure) (ctrl.Result, error) {
	p.setReady(metav1.ConditionFalse, f.reason, corev1.EventTypeWarning, f.message)
	if f.transient {
		return ctrl.Result{}, errBrokerRetry{msg: f.message}
	}
	return p.resyncLater()
}

// resyncLater ends a pass until the next observation.
func (p *objectPass[T, S]) resyncLater() (ctrl.Result, error) {
	return ctrl.Result{RequeueAfter: resyncAfter(p.resync)}, nil
}

// pollSoon ends a pass that waits on the brokers (a reassignment, a group
// that must empty): it looks again sooner than the resync.
func (p *objectPass[T, S]) pollSoon() (ctrl.Result, error) {
	return ctrl.Result{RequeueAfter: pollAfter(p.resync)}, nil
}

// setReady sets the Ready condition. When its status or reason changed and
// it is False, an event of eventType with the same reason and message says
// so; an empty eventType sends none.
func (p *objectPass[T, S]) setReady(status metav1.ConditionStatus, reason, eventType, message string) {
	if p.setReadyQuietly(status, reason, message) && status == metav1.ConditionFalse && eventType != "" {
		p.event(eventType, reason, "Reconcile", "%s", message)
	}
}

// setReadyQuietly sets the Ready condition and reports whether its status
// or reason changed, for a caller that sends its own event.
func (p *objectPass[T, S]) setReadyQuietly(status metav1.ConditionStatus, reason, message string) bool {
	conds := p.common().conditions
	old := meta.FindStatusCondition(*conds, kairov1alpha1.ConditionReady)
	changed := old == nil || old.Status != status || old.Reason != reason
	meta.SetStatusCondition(conds, metav1.Condition{Type: kairov1alpha1.ConditionReady, Status: status,
		Reason: reason, Message: message, ObservedGeneration: p.generation()})
	return changed
}

// readyReason is the reason of the Ready condition as it stands (from the
// last pass, until this one sets it), "" when there is none.
func (p *objectPass[T, S]) readyReason() string {
	if c := meta.FindStatusCondition(*p.common().conditions, kairov1alpha1.ConditionReady); c != nil {
		return c.Reason
	}
	return ""
}

// readyTrueReason is the reason of a True Ready condition, else "".
func (p *objectPass[T, S]) readyTrueReason() string {
	if c := meta.FindStatusCondition(*p.common().conditions, kairov1alpha1.ConditionReady); c != nil && c.Status == metav1.ConditionTrue {
		return c.Reason
	}
	return ""
}

func (p *objectPass[T, S]) event(eventType, reason, action, note string, args ...any) {
	recordEvent(p.recorder, p.obj, nil, eventType, reason, action, note, args...)
}

// finalize runs when the resource is being deleted. It deletes the object
// on the brokers when the policy says so and this resource manages it, then
// releases the finalizer. It never waits for a cluster that is gone or
// being deleted, and never deletes an object another live resource still
// claims.
func (p *objectPass[T, S]) finalize(ctx context.Context) (ctrl.Result, error) {
	k := p.kind
	t := k.terms()
	if !controllerutil.ContainsFinalizer(p.obj, kairov1alpha1.FinalizerName) {
		return ctrl.Result{}, nil
	}
	kept := fmt.Sprintf(t.kept, p.name)
	switch {
	case k.retains(p.obj):
		return p.release(ctx, corev1.EventTypeNormal, t.retained, "Left %s on the brokers (deletionPolicy Retain)", kept)
	case p.cluster == nil:
		return p.release(ctx, corev1.EventTypeWarning, ReasonFinalizerReleased,
			"KairoCluster %q is gone; %s %s not deleted on the brokers", k.clusterName(p.obj), kept, t.keptVerb)
	case p.cluster.DeletionTimestamp != nil:
		return p.release(ctx, corev1.EventTypeWarning, ReasonFinalizerReleased,
			"KairoCluster %q is being deleted; %s %s not deleted on the brokers", k.clusterName(p.obj), kept, t.keptVerb)
	}
	if o := oldestLive(p.claimants, p.obj.GetUID()); o != nil {
		return p.release(ctx, corev1.EventTypeNormal, ReasonHandedOver,
			"%s %q is still managed by %s %q; %s not deleted on the brokers", t.noun, p.name, t.kind, o.GetName(), t.keptAgain)
	}
	return k.delete(ctx, p)
}

// release removes the finalizer and records why.
func (p *objectPass[T, S]) release(ctx context.Context, eventType, reason, note string, args ...any) (ctrl.Result, error) {
	if err := setFinalizer(ctx, p.client, p.obj, false); err != nil {
		return ctrl.Result{}, err
	}
	p.released = true
	logf.FromContext(ctx).Info("Released the finalizer", "kind", p.kind.terms().kind, "reason", reason)
	p.event(eventType, reason, "Delete", note, args...)
	return ctrl.Result{}, nil
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
