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

// ConsumerGroupReconciler observes a consumer group on a KairoCluster's
// brokers — state, members, committed offsets and lag — and acts on it only
// where the ConsumerGroup asks: the group's session timeout and assignment
// strategy, one-shot offset resets, and deleting the committed offsets when
// the resource goes and the deletion policy says so. Consumers create
// groups; this reconciler never adds or removes members.
type ConsumerGroupReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder events.EventRecorder
	// Brokers hands out clients for a cluster's brokers.
	Brokers BrokerClients
	// ResyncInterval is how often a group is observed; DefaultResyncInterval
	// when zero.
	ResyncInterval time.Duration
	// MaxConcurrentReconciles is how many ConsumerGroups are reconciled at
	// once; 4 when zero.
	MaxConcurrentReconciles int
}

// SetupWithManager registers the reconciler, its field indexes and watches.
func (r *ConsumerGroupReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Recorder = eventRecorder(mgr, r.Recorder, "consumergroup")
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &kairov1alpha1.ConsumerGroup{}, groupClusterIndex, func(o client.Object) []string {
		return []string{o.(*kairov1alpha1.ConsumerGroup).Spec.ClusterRef.Name}
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &kairov1alpha1.ConsumerGroup{}, groupClaimIndex, func(o client.Object) []string {
		g := o.(*kairov1alpha1.ConsumerGroup)
		return []string{claimKey(g.Spec.ClusterRef.Name, groupID(g))}
	}); err != nil {
		return err
	}
	workers := r.MaxConcurrentReconciles
	if workers == 0 {
		workers = 4
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&kairov1alpha1.ConsumerGroup{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&kairov1alpha1.KairoCluster{}, handler.EnqueueRequestsFromMapFunc(r.groupsOnCluster),
			builder.WithPredicates(clusterChanged)).
		Watches(&kairov1alpha1.ConsumerGroup{}, handler.EnqueueRequestsFromMapFunc(r.otherClaimants),
			builder.WithPredicates(claimantsChanged)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: workers,
			RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](brokerRetryBase, brokerRetryMax),
		}).
		Named("consumergroup").
		Complete(r)
}

func (r *ConsumerGroupReconciler) resync() time.Duration {
	if r.ResyncInterval > 0 {
		return r.ResyncInterval
	}
	return DefaultResyncInterval
}

// groupID is the group's id on the brokers.
func groupID(g *kairov1alpha1.ConsumerGroup) string {
	if g.Spec.GroupID != "" {
		return g.Spec.GroupID
	}
	return g.Name
}

func (r *ConsumerGroupReconciler) groupsOnCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	var list kairov1alpha1.ConsumerGroupList
	if err := r.List(ctx, &list, client.InNamespace(obj.GetNamespace()),
		client.MatchingFields{groupClusterIndex: obj.GetName()}); err != nil {
		logf.FromContext(ctx).Error(err, "Failed to list ConsumerGroups of a KairoCluster", "cluster", obj.GetName())
		return nil
	}
	objs := make([]metav1.Object, len(list.Items))
	for i := range list.Items {
		objs[i] = &list.Items[i]
	}
	return requestsFor(objs, "")
}

func (r *ConsumerGroupReconciler) otherClaimants(ctx context.Context, obj client.Object) []reconcile.Request {
	g, ok := obj.(*kairov1alpha1.ConsumerGroup)
	if !ok {
		return nil
	}
	claimants, err := r.claimants(ctx, g)
	if err != nil {
		logf.FromContext(ctx).Error(err, "Failed to list ConsumerGroups naming the same group", "group", groupID(g))
		return nil
	}
	return requestsFor(claimants, g.UID)
}

// claimants are the ConsumerGroups (g included) that name g's group on g's cluster.
func (r *ConsumerGroupReconciler) claimants(ctx context.Context, g *kairov1alpha1.ConsumerGroup) ([]metav1.Object, error) {
	var list kairov1alpha1.ConsumerGroupList
	if err := r.List(ctx, &list, client.InNamespace(g.Namespace),
		client.MatchingFields{groupClaimIndex: claimKey(g.Spec.ClusterRef.Name, groupID(g))}); err != nil {
		return nil, err
	}
	out := make([]metav1.Object, 0, len(list.Items)+1)
	self := false
	for i := range list.Items {
		out = append(out, &list.Items[i])
		self = self || list.Items[i].UID == g.UID
	}
	if !self {
		out = append(out, g)
	}
	return out, nil
}

// +kubebuilder:rbac:groups=kairolog.io,resources=consumergroups,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kairolog.io,resources=consumergroups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kairolog.io,resources=consumergroups/finalizers,verbs=update
// +kubebuilder:rbac:groups=kairolog.io,resources=kairoclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile observes one ConsumerGroup's group and applies what its spec
// asks. A result with RequeueAfter is the next observation; an error means a
// broker call failed transiently and the rate limiter spaces the retry.
func (r *ConsumerGroupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cg kairov1alpha1.ConsumerGroup
	if err := r.Get(ctx, req.NamespacedName, &cg); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster, err := lookupCluster(ctx, r.Client, cg.Namespace, cg.Spec.ClusterRef.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	claimants, err := r.claimants(ctx, &cg)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := &groupPass{r: r, group: &cg, cluster: cluster, claimants: claimants,
		id: groupID(&cg), status: *cg.Status.DeepCopy()}

	var res ctrl.Result
	if cg.DeletionTimestamp != nil {
		res, err = p.finalize(ctx)
	} else {
		res, err = p.reconcile(ctx)
	}
	if p.released {
		return ctrl.Result{}, err
	}
	if werr := r.writeStatus(ctx, &cg, &p.status); werr != nil {
		logf.FromContext(ctx).Error(werr, "Failed to update ConsumerGroup status")
		if err == nil {
			err = werr
		}
	}
	return res, err
}

// writeStatus patches the status subresource when it changed.
func (r *ConsumerGroupReconciler) writeStatus(ctx context.Context, cg *kairov1alpha1.ConsumerGroup, st *kairov1alpha1.ConsumerGroupStatus) error {
	if equality.Semantic.DeepEqual(cg.Status, *st) {
		return nil
	}
	base := cg.DeepCopy()
	cg.Status = *st
	err := r.Status().Patch(ctx, cg, client.MergeFrom(base))
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
