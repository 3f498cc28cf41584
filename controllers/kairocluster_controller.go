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
	"sync"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/api"
	brokerclient "github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/controllers/resources"
)

// KairoClusterReconciler turns a KairoCluster into its children (the CA and
// certificate Secrets, ConfigMap, Services, StatefulSet,
// PodDisruptionBudget, NetworkPolicy), restarts, scales and resizes
// the brokers safely, and writes what it observes of them into the status.
type KairoClusterReconciler struct {
	client.Client
	// APIReader reads around the cache, which holds only the operator's
	// labelled children: it tells whether a child that exists without the
	// labels is the cluster's, and reads StorageClasses.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
	// Brokers reaches each cluster's brokers.
	Brokers BrokerClients
	// DefaultImage is the broker image of clusters that name none.
	DefaultImage string
	// ResyncInterval is how often a quiet cluster's broker-observed status
	// (partitions, leaders, ISR health) is refreshed.
	ResyncInterval time.Duration
	// ProgressInterval is how often a cluster is looked at while the
	// operator waits on its brokers: a restarted broker rejoining its ISRs,
	// a drain moving replicas. Pod and StatefulSet changes wake it sooner.
	ProgressInterval time.Duration
	// Now is the clock certificates are issued and renewed by; nil is
	// time.Now.
	Now func() time.Time

	mu       sync.Mutex
	restarts map[types.NamespacedName]restartExpectation
	failures map[types.NamespacedName]int
	removals map[types.NamespacedName][]int32
	// announced is what condition events last said, per cluster.
	announced map[types.NamespacedName]announced
}

// reconcileState is what one pass over a cluster learns and decides; the
// phases fill it in and the status is computed from it at the end.
type reconcileState struct {
	cluster *kairov1alpha1.KairoCluster
	key     types.NamespacedName
	log     logr.Logger
	builder *resources.Builder
	// certs is what the certificates phase decided.
	certs *certificates

	// Observed children.
	sts    *appsv1.StatefulSet
	pods   map[int32]*corev1.Pod
	claims map[int32]*corev1.PersistentVolumeClaim

	// Observed brokers; meta is nil when the admin API could not be reached.
	brokers   *brokerclient.Client
	meta      *api.Metadata
	brokerErr error

	// Decisions, for the conditions.
	notOwned    []string // children someone else owns
	progressing []finding
	degraded    []finding
	// rebalancePending is set while new brokers wait for a rebalance.
	rebalancePending bool
}

// finding is one reason for a condition.
type finding struct {
	reason  string
	message string
}

func (st *reconcileState) progress(reason, message string) {
	st.progressing = append(st.progressing, finding{reason, message})
}

func (st *reconcileState) degrade(reason, message string) {
	st.degraded = append(st.degraded, finding{reason, message})
}

// phase is one step of a pass. It returns false when later phases must not
// run (a child is not the cluster's, the StatefulSet does not exist yet);
// the status is written either way. An error aborts the pass and is
// retried with the controller's backoff.
type phase func(ctx context.Context, st *reconcileState) (bool, error)

// +kubebuilder:rbac:groups=kairolog.io,resources=kairoclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=kairolog.io,resources=kairoclusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kairolog.io,resources=kairoclusters/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=core,resources=services,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=core,resources=configmaps,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=core,resources=persistentvolumeclaims,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile runs the phases of one pass over a KairoCluster, then writes
// its status if it changed. Deleting a cluster needs no work of the
// operator: its children carry owner references and the garbage collector
// removes them.
func (r *KairoClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	cluster := &kairov1alpha1.KairoCluster{}
	if err := r.Get(ctx, req.NamespacedName, cluster); err != nil {
		if client.IgnoreNotFound(err) == nil {
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	st := &reconcileState{cluster: cluster, key: req.NamespacedName, log: log}

	for _, p := range []phase{
		r.reconcileCertificates,
		r.applyChildren,
		r.observe,
		r.reduceTwoVoters,
		r.resizeStorage,
		r.scale,
		r.rollingRestart,
	} {
		cont, err := p(ctx, st)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !cont {
			break
		}
	}
	if err := r.writeStatus(ctx, st); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.nextPass(st)}, nil
}

// nextPass is when to look at the cluster again without any event: soon
// while the operator waits on its brokers or some are down, with a growing
// delay (up to the resync interval) while they cannot be reached, else at
// the resync interval.
func (r *KairoClusterReconciler) nextPass(st *reconcileState) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failures == nil {
		r.failures = map[types.NamespacedName]int{}
	}
	if st.brokerErr != nil {
		n := r.failures[st.key]
		r.failures[st.key] = n + 1
		return min(r.progressInterval()<<min(n, 10), r.resyncInterval())
	}
	delete(r.failures, st.key)
	next := r.resyncInterval()
	if len(st.progressing) > 0 || st.unhealthy() {
		next = r.progressInterval()
	}
	if st.certs != nil {
		// A certificate renewal is due on time, not at the next resync.
		next = min(next, max(time.Until(st.certs.due)+time.Second, time.Second))
	}
	return next
}

// unhealthy reports brokers down or partitions short of replicas: the
// status then follows the brokers closely until they recover, instead of
// once per resync interval.
func (st *reconcileState) unhealthy() bool {
	if st.sts == nil {
		return false
	}
	if st.readyPods() < st.replicas() {
		return true
	}
	for _, f := range st.degraded {
		if f.reason == ReasonUnderReplicated || f.reason == ReasonBrokerWithoutPod {
			return true
		}
	}
	return false
}

func (r *KairoClusterReconciler) resyncInterval() time.Duration {
	if r.ResyncInterval > 0 {
		return r.ResyncInterval
	}
	return DefaultResyncInterval
}

func (r *KairoClusterReconciler) progressInterval() time.Duration {
	if r.ProgressInterval > 0 {
		return r.ProgressInterval
	}
	return DefaultProgressInterval
}

// forget drops what the reconciler remembers of a deleted cluster.
func (r *KairoClusterReconciler) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.restarts, key)
	delete(r.failures, key)
	delete(r.removals, key)
	delete(r.announced, key)
}

// SetupWithManager registers the reconciler with the manager.
func (r *KairoClusterReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return r.controllerBuilder(mgr).Complete(r)
}

// controllerBuilder is the controller's watches. The KairoCluster itself
// wakes the reconciler only when its spec (generation) or annotations (the
// endpoint override) change, not on the operator's own status writes. Pods
// and claims are the StatefulSet's, not the cluster's, so they are mapped
// through the instance label, and only changes that matter pass: a pod
// created, deleted or changing readiness, a claim bound or resized.
func (r *KairoClusterReconciler) controllerBuilder(mgr ctrl.Manager) *builder.Builder {
	r.Recorder = eventRecorder(mgr, r.Recorder, "kairocluster")
	toCluster := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		labels := obj.GetLabels()
		if labels[resources.LabelName] != resources.AppName || labels[resources.LabelInstance] == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{
			Namespace: obj.GetNamespace(), Name: labels[resources.LabelInstance]}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("kairocluster").
		For(&kairov1alpha1.KairoCluster{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&corev1.Secret{}).
		Owns(&corev1.Service{}).
		Owns(&policyv1.PodDisruptionBudget{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&networkingv1.NetworkPolicy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// The Secrets cert-manager writes for a cluster (issuerRef) carry
		// its labels but no owner: a renewal wakes the cluster.
		Watches(&corev1.Secret{}, toCluster, builder.WithPredicates(issuedSecret)).
		Watches(&corev1.Pod{}, toCluster, builder.WithPredicates(podChanged)).
		Watches(&corev1.PersistentVolumeClaim{}, toCluster, builder.WithPredicates(claimChanged)).
		WithOptions(controller.Options{
			// Transient API errors retry from half a second up to a minute,
			// never in a tight loop.
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](
				clusterRetryBase, clusterRetryMax),
		})
}

// podChanged passes pod events the reconciler acts on.
var podChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		oldPod, ok1 := e.ObjectOld.(*corev1.Pod)
		newPod, ok2 := e.ObjectNew.(*corev1.Pod)
		if !ok1 || !ok2 {
			return false
		}
		return podReady(oldPod) != podReady(newPod) ||
			oldPod.DeletionTimestamp.IsZero() != newPod.DeletionTimestamp.IsZero() ||
			oldPod.Annotations[resources.ConfigHashAnnotation] != newPod.Annotations[resources.ConfigHashAnnotation]
	},
}

// claimChanged passes claim events the reconciler acts on.
var claimChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		oldPVC, ok1 := e.ObjectOld.(*corev1.PersistentVolumeClaim)
		newPVC, ok2 := e.ObjectNew.(*corev1.PersistentVolumeClaim)
		if !ok1 || !ok2 {
			return false
		}
		return oldPVC.Status.Phase != newPVC.Status.Phase ||
			!oldPVC.Status.Capacity.Storage().Equal(*newPVC.Status.Capacity.Storage()) ||
			!oldPVC.Spec.Resources.Requests.Storage().Equal(*newPVC.Spec.Resources.Requests.Storage())
	},
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
