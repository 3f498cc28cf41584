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

// brokerobject.go is the one reconciler of resources that each manage an
// object on the brokers of a referenced KairoCluster: Topic and
// ConsumerGroup. It owns everything the two have in common — the field
// indexes and watches, which resource owns a name when several claim it,
// waiting for the cluster, the finalizer and its release, sorting broker
// failures into the Ready condition, and writing status only when it
// changed. A Kind (topicKind, groupKind) adds what it does on the brokers:
// ensure (create, adopt, converge and observe), forget, and delete.

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
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
	brokerclient "github.com/kairolog/kairolog/broker/client"
)

// objectKind is what one Kind adds to the shared reconciler. T is a pointer
// to the resource, S its status type. A Kind is a struct without fields:
// the reconciler's type names it, so the exported reconcilers are plain
// aliases that callers fill in like any other struct.
type objectKind[T client.Object, S any] interface {
	// terms name the Kind in its controller, indexes, events and messages.
	terms() kindTerms
	// newObject and newList allocate a resource and a list of resources.
	newObject() T
	newList() client.ObjectList
	// clusterName is the KairoCluster the resource references; brokerName
	// the name of its object on the brokers.
	clusterName(obj T) string
	brokerName(obj T) string
	// status points at the resource's status, common at the fields of a
	// status the shared reconciler writes itself.
	status(obj T) *S
	common(st *S) commonStatus
	// retains reports whether deleting the resource leaves its object on
	// the brokers (its deletion policy); such a resource has no finalizer.
	retains(obj T) bool

	// ensure brings the object on the brokers in line with the spec and
	// observes it into p.status, setting Ready. The cluster exists, this
	// resource owns the name and its finalizer is in place.
	ensure(ctx context.Context, p *objectPass[T, S], bc *brokerclient.Client) (ctrl.Result, error)
	// forget clears what was observed of an object this resource does not
	// manage (another resource owns the name).
	forget(st *S)
	// delete removes the object from the brokers, or leaves it, and ends
	// with p.release; the policy is Delete, the cluster is there, and no
	// other live resource claims the name. It calls p.connect itself, so it
	// can decide without the brokers when there is nothing to delete.
	delete(ctx context.Context, p *objectPass[T, S]) (ctrl.Result, error)
}

// kindTerms name a Kind.
type kindTerms struct {
	// kind is the resource's Kind ("Topic"); controller its controller's
	// name ("topic"), which also names its field indexes and event recorder.
	kind, controller string
	// noun starts a sentence about the object on the brokers: "Topic", "Group".
	noun string
	// kept is a format, taking the name, for what deleting the resource
	// would remove on the brokers: `topic %q`, `the offsets of group %q`;
	// keptVerb is its verb ("was", "were") and keptAgain refers back to it
	// ("it was", "its offsets were"). Release events say what was kept.
	kept, keptVerb, keptAgain string
	// retained is the event reason of a release under deletionPolicy Retain.
	retained string
	// workers is the default MaxConcurrentReconciles.
	workers int
}

// commonStatus points at the status fields every Kind has.
type commonStatus struct {
	conditions         *[]metav1.Condition
	observedGeneration *int64
	// name is the object's name on the brokers (status.topicName, status.groupId).
	name *string
}

// brokerObjectReconciler reconciles the resources of Kind K. TopicReconciler
// and ConsumerGroupReconciler are its instances.
type brokerObjectReconciler[T client.Object, S any, K objectKind[T, S]] struct {
	client.Client
	Scheme *runtime.Scheme
	// Recorder records the events; the manager's when nil.
	Recorder events.EventRecorder
	// Brokers hands out clients for a cluster's brokers.
	Brokers BrokerClients
	// ResyncInterval is how often a resource is compared with the brokers
	// when nothing changed; DefaultResyncInterval when zero.
	ResyncInterval time.Duration
	// MaxConcurrentReconciles is how many resources are reconciled at once;
	// the Kind's default when zero (64 Topics, 4 ConsumerGroups). Reconciles
	// mostly wait on the brokers and the API server.
	MaxConcurrentReconciles int
}

func (r *brokerObjectReconciler[T, S, K]) kind() K {
	var k K
	return k
}

func (r *brokerObjectReconciler[T, S, K]) resync() time.Duration {
	if r.ResyncInterval > 0 {
		return r.ResyncInterval
	}
	return DefaultResyncInterval
}

func (r *brokerObjectReconciler[T, S, K]) clusterIndex() string {
	return "kairolog.io/" + r.kind().terms().controller + "-cluster"
}

func (r *brokerObjectReconciler[T, S, K]) claimIndex() string {
	return "kairolog.io/" + r.kind().terms().controller + "-claim"
}

// SetupWithManager registers the reconciler, its field indexes (the
// cluster a resource references, and the cluster and name it claims) and
// its watches. Watches of the resource pass only spec changes
// (generation), so the reconciler's own status writes never wake it;
// observation runs on the resync interval.
func (r *brokerObjectReconciler[T, S, K]) SetupWithManager(mgr ctrl.Manager) error {
	k := r.kind()
	t := k.terms()
	r.Recorder = eventRecorder(mgr, r.Recorder, t.controller)
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, k.newObject(), r.clusterIndex(), func(o client.Object) []string {
		return []string{k.clusterName(o.(T))}
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, k.newObject(), r.claimIndex(), func(o client.Object) []string {
		return []string{claimKey(k.clusterName(o.(T)), k.brokerName(o.(T)))}
	}); err != nil {
		return err
	}
	workers := r.MaxConcurrentReconciles
	if workers == 0 {
		workers = t.workers
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(k.newObject(), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&kairov1alpha1.KairoCluster{}, handler.EnqueueRequestsFromMapFunc(r.onCluster),
			builder.WithPredicates(clusterChanged)).
		Watches(k.newObject(), handler.EnqueueRequestsFromMapFunc(r.otherClaimants),
			builder.WithPredicates(claimantsChanged)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: workers,
			RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](brokerRetryBase, brokerRetryMax),
		}).
		Named(t.controller).
		Complete(r)
}

// list returns the resources in namespace whose field index holds value.
func (r *brokerObjectReconciler[T, S, K]) list(ctx context.Context, namespace, index, value string) ([]metav1.Object, error) {
	list := r.kind().newList()
	if err := r.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{index: value}); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]metav1.Object, len(items))
	for i, item := range items {
		out[i] = item.(T)
	}
	return out, nil
}

// onCluster wakes every resource on a cluster that appeared, went away,
// moved or changed readiness.
func (r *brokerObjectReconciler[T, S, K]) onCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	objs, err := r.list(ctx, obj.GetNamespace(), r.clusterIndex(), obj.GetName())
	if err != nil {
		logf.FromContext(ctx).Error(err, "Failed to list the resources of a KairoCluster",
			"kind", r.kind().terms().kind, "cluster", obj.GetName())
		return nil
	}
	return requestsFor(objs, "")
}

// otherClaimants wakes the resources that name the same object as obj, so
// that the next owner takes over when the current one goes away.
func (r *brokerObjectReconciler[T, S, K]) otherClaimants(ctx context.Context, obj client.Object) []reconcile.Request {
	o, ok := obj.(T)
	if !ok {
		return nil
	}
	claimants, err := r.claimants(ctx, o)
	if err != nil {
		logf.FromContext(ctx).Error(err, "Failed to list the resources naming the same object",
			"kind", r.kind().terms().kind, "name", r.kind().brokerName(o))
		return nil
	}
	return requestsFor(claimants, o.GetUID())
}

// claimants are the resources (obj included) that name obj's object on
// obj's cluster.
func (r *brokerObjectReconciler[T, S, K]) claimants(ctx context.Context, obj T) ([]metav1.Object, error) {
	k := r.kind()
	out, err := r.list(ctx, obj.GetNamespace(), r.claimIndex(), claimKey(k.clusterName(obj), k.brokerName(obj)))
	if err != nil {
		return nil, err
	}
	for _, c := range out {
		if c.GetUID() == obj.GetUID() {
			return out, nil
		}
	}
	return append(out, obj), nil // the cache has not seen obj yet
}

// +kubebuilder:rbac:groups=kairolog.io,resources=topics,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kairolog.io,resources=topics/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kairolog.io,resources=topics/finalizers,verbs=update
// +kubebuilder:rbac:groups=kairolog.io,resources=consumergroups,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kairolog.io,resources=consumergroups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kairolog.io,resources=consumergroups/finalizers,verbs=update
// +kubebuilder:rbac:groups=kairolog.io,resources=kairoclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one resource's object on the brokers in line with its
// spec and records what the brokers hold. A result with RequeueAfter is the
// next observation; an error means a broker call failed transiently and the
// controller's rate limiter spaces the retry.
func (r *brokerObjectReconciler[T, S, K]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	k := r.kind()
	obj := k.newObject()
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster, err := lookupCluster(ctx, r.Client, obj.GetNamespace(), k.clusterName(obj))
	if err != nil {
		return ctrl.Result{}, err
	}
	claimants, err := r.claimants(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := &objectPass[T, S]{kind: k, client: r.Client, recorder: r.Recorder, brokers: r.Brokers, resync: r.resync(),
		obj: obj, cluster: cluster, claimants: claimants, name: k.brokerName(obj),
		status: *k.status(obj.DeepCopyObject().(T))}

	var res ctrl.Result
	if obj.GetDeletionTimestamp() != nil {
		res, err = p.finalize(ctx)
	} else {
		res, err = p.reconcile(ctx)
	}
	if p.released {
		return ctrl.Result{}, err
	}
	if werr := r.writeStatus(ctx, obj, &p.status); werr != nil {
		logf.FromContext(ctx).Error(werr, "Failed to update the status", "kind", k.terms().kind)
		if err == nil {
			err = werr
		}
	}
	return res, err
}

// writeStatus patches the status subresource when the new status differs
// from what the API server holds; an unchanged pass writes nothing.
func (r *brokerObjectReconciler[T, S, K]) writeStatus(ctx context.Context, obj T, st *S) error {
	stored := r.kind().status(obj)
	if equality.Semantic.DeepEqual(*stored, *st) {
		return nil
	}
	base := obj.DeepCopyObject().(client.Object)
	*stored = *st
	err := r.Status().Patch(ctx, obj, client.MergeFrom(base))
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// lookupCluster returns the KairoCluster a resource references, or nil when
// it does not exist.
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
