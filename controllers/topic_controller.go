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
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// TopicReconciler keeps a topic on a KairoCluster's brokers in line with a
// Topic resource: it creates or adopts the topic, raises its partitions,
// sets its config and replication factor back to the spec, reports what the
// brokers hold in status, and deletes the topic through a finalizer when the
// deletion policy says so.
type TopicReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder events.EventRecorder
	// Brokers hands out clients for a cluster's brokers.
	Brokers BrokerClients
	// ResyncInterval is how often a Topic is compared with the brokers when
	// nothing changed; DefaultResyncInterval when zero.
	ResyncInterval time.Duration
	// MaxConcurrentReconciles is how many Topics are reconciled at once; 16
	// when zero. Reconciles mostly wait on the brokers and the API server, so
	// creating many Topics at once goes as fast as the brokers create topics.
	MaxConcurrentReconciles int
}

// SetupWithManager registers the reconciler, its field indexes and watches.
// Topic watches pass only spec changes (generation), so the reconciler's own
// status writes never wake it; observation runs on the resync interval.
func (r *TopicReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Recorder = eventRecorder(mgr, r.Recorder, "topic")
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &kairov1alpha1.Topic{}, topicClusterIndex, func(o client.Object) []string {
		return []string{o.(*kairov1alpha1.Topic).Spec.ClusterRef.Name}
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &kairov1alpha1.Topic{}, topicClaimIndex, func(o client.Object) []string {
		t := o.(*kairov1alpha1.Topic)
		return []string{claimKey(t.Spec.ClusterRef.Name, topicName(t))}
	}); err != nil {
		return err
	}
	workers := r.MaxConcurrentReconciles
	if workers == 0 {
		workers = 16
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&kairov1alpha1.Topic{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&kairov1alpha1.KairoCluster{}, handler.EnqueueRequestsFromMapFunc(r.topicsOnCluster),
			builder.WithPredicates(clusterChanged)).
		Watches(&kairov1alpha1.Topic{}, handler.EnqueueRequestsFromMapFunc(r.otherClaimants),
			builder.WithPredicates(claimantsChanged)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: workers,
			RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](brokerRetryBase, brokerRetryMax),
		}).
		Named("topic").
		Complete(r)
}

func (r *TopicReconciler) resync() time.Duration {
	if r.ResyncInterval > 0 {
		return r.ResyncInterval
	}
	return DefaultResyncInterval
}

// topicName is the topic's name on the brokers.
func topicName(t *kairov1alpha1.Topic) string {
	if t.Spec.TopicName != "" {
		return t.Spec.TopicName
	}
	return t.Name
}

// topicsOnCluster wakes every Topic of a cluster that appeared, went away,
// moved or changed readiness.
func (r *TopicReconciler) topicsOnCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	var list kairov1alpha1.TopicList
	if err := r.List(ctx, &list, client.InNamespace(obj.GetNamespace()),
		client.MatchingFields{topicClusterIndex: obj.GetName()}); err != nil {
		logf.FromContext(ctx).Error(err, "Failed to list Topics of a KairoCluster", "cluster", obj.GetName())
		return nil
	}
	objs := make([]metav1.Object, len(list.Items))
	for i := range list.Items {
		objs[i] = &list.Items[i]
	}
	return requestsFor(objs, "")
}

// otherClaimants wakes the Topics that name the same topic as obj, so that
// the next owner takes over when the current one goes away.
func (r *TopicReconciler) otherClaimants(ctx context.Context, obj client.Object) []reconcile.Request {
	t, ok := obj.(*kairov1alpha1.Topic)
	if !ok {
		return nil
	}
	claimants, err := r.claimants(ctx, t)
	if err != nil {
		logf.FromContext(ctx).Error(err, "Failed to list Topics naming the same topic", "topic", topicName(t))
		return nil
	}
	return requestsFor(claimants, t.UID)
}

// claimants are the Topics (t included) that name t's topic on t's cluster.
func (r *TopicReconciler) claimants(ctx context.Context, t *kairov1alpha1.Topic) ([]metav1.Object, error) {
	var list kairov1alpha1.TopicList
	if err := r.List(ctx, &list, client.InNamespace(t.Namespace),
		client.MatchingFields{topicClaimIndex: claimKey(t.Spec.ClusterRef.Name, topicName(t))}); err != nil {
		return nil, err
	}
	out := make([]metav1.Object, 0, len(list.Items)+1)
	self := false
	for i := range list.Items {
		out = append(out, &list.Items[i])
		self = self || list.Items[i].UID == t.UID
	}
	if !self { // the cache has not seen t yet
		out = append(out, t)
	}
	return out, nil
}

// +kubebuilder:rbac:groups=kairolog.io,resources=topics,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kairolog.io,resources=topics/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kairolog.io,resources=topics/finalizers,verbs=update
// +kubebuilder:rbac:groups=kairolog.io,resources=kairoclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one Topic's topic in line with its spec and records what
// the brokers hold. A result with RequeueAfter is the next observation; an
// error means a broker call failed transiently and the controller's rate
// limiter spaces the retry.
func (r *TopicReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var topic kairov1alpha1.Topic
	if err := r.Get(ctx, req.NamespacedName, &topic); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster, err := lookupCluster(ctx, r.Client, topic.Namespace, topic.Spec.ClusterRef.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	claimants, err := r.claimants(ctx, &topic)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := &topicPass{r: r, topic: &topic, cluster: cluster, claimants: claimants,
		name: topicName(&topic), status: *topic.Status.DeepCopy()}

	var res ctrl.Result
	if topic.DeletionTimestamp != nil {
		res, err = p.finalize(ctx)
	} else {
		res, err = p.reconcile(ctx)
	}
	if p.released {
		return ctrl.Result{}, err
	}
	if werr := r.writeStatus(ctx, &topic, &p.status); werr != nil {
		logf.FromContext(ctx).Error(werr, "Failed to update Topic status")
		if err == nil {
			err = werr
		}
	}
	return res, err
}

// writeStatus patches the status subresource when the new status differs
// from what the API server holds; an unchanged pass writes nothing.
func (r *TopicReconciler) writeStatus(ctx context.Context, t *kairov1alpha1.Topic, st *kairov1alpha1.TopicStatus) error {
	if equality.Semantic.DeepEqual(t.Status, *st) {
		return nil
	}
	base := t.DeepCopy()
	t.Status = *st
	err := r.Status().Patch(ctx, t, client.MergeFrom(base))
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
