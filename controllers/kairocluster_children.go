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
	"reflect"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kairolog/kairolog/controllers/resources"
)

// applyChildren creates or updates the ConfigMap, the peer Secret, the
// Services, the StatefulSet and the PodDisruptionBudget, in that order. A child that
// exists but is not controlled by this cluster is never adopted or
// overwritten: it is reported (condition and event), the children after it
// are not applied, and the pass stops before touching brokers.
//
// The StatefulSet is read first: its annotations hold the number of initial
// voters and the default replication factor fixed at creation (a cluster
// created before the second existed used its voter count for both), and
// its replicas stay above spec.replicas until a scale down has drained the
// departing brokers.
func (r *KairoClusterReconciler) applyChildren(ctx context.Context, st *reconcileState) (bool, error) {
	c := st.cluster
	voters, replication := resources.Voters(c.Spec.Replicas), resources.DefaultReplication(c.Spec.Replicas)
	replicas := c.Spec.Replicas
	scaleUpFrom := int32(-1)
	current := &appsv1.StatefulSet{}
	err := r.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: resources.StatefulSetName(c)}, current)
	switch {
	case err == nil && metav1.IsControlledBy(current, c):
		if v, err := strconv.Atoi(current.Annotations[resources.VotersAnnotation]); err == nil && v > 0 {
			voters, replication = int32(v), int32(v)
		}
		if v, err := strconv.Atoi(current.Annotations[resources.DefaultReplicationAnnotation]); err == nil && v > 0 {
			replication = int32(v)
		}
		have := ptr.Deref(current.Spec.Replicas, 0)
		replicas = max(replicas, have)
		if replicas > have {
			scaleUpFrom = have
		}
	case err != nil && !apierrors.IsNotFound(err):
		return false, err
	}
	st.builder = &resources.Builder{Cluster: c, Scheme: r.Scheme, DefaultImage: r.DefaultImage,
		Replicas: replicas, Voters: voters, DefaultReplication: replication}
	if st.certs != nil {
		st.builder.Certificates, st.builder.PeerTLS = st.certs.version, st.certs.peerTLS
	}

	for _, rb := range st.builder.ResourceBuilders() {
		if _, ok := rb.(*resources.StatefulSetBuilder); ok && scaleUpFrom >= 0 && c.Spec.RebalanceOnScaleUp {
			rb = rebalanceAfterScaleUp{rb}
		}
		obj, err := r.apply(ctx, st, rb)
		if err != nil {
			return false, err
		}
		if obj == nil {
			// Later children depend on this one (pods mount the ConfigMap
			// and resolve peers through the headless Service): none is
			// created next to someone else's object.
			break
		}
		if sts, ok := obj.(*appsv1.StatefulSet); ok {
			st.sts = sts
		}
	}
	if !resources.PodDisruptionBudgetEnabled(c) {
		if err := r.deleteBudget(ctx, st); err != nil {
			return false, err
		}
	}
	if !resources.NetworkPolicyEnabled(c) {
		if err := r.deleteNetworkPolicy(ctx, st); err != nil {
			return false, err
		}
	}
	if len(st.notOwned) > 0 {
		st.degrade(ReasonResourceNotOwned, fmt.Sprintf("%s already exists and is not owned by this KairoCluster; "+
			"the operator leaves it alone and creates nothing after it. Delete or rename it to let the operator proceed",
			strings.Join(st.notOwned, ", ")))
		return false, nil
	}
	if scaleUpFrom >= 0 {
		r.event(c, st.sts, corev1.EventTypeNormal, ReasonScalingUp, "Scale",
			"Scaling up from %d to %d brokers", scaleUpFrom, replicas)
	}
	return st.sts != nil, nil
}

// rebalanceAfterScaleUp marks the StatefulSet, in the same write that adds
// brokers, as owing a rebalance once the new brokers are in.
type rebalanceAfterScaleUp struct{ resources.ResourceBuilder }

func (b rebalanceAfterScaleUp) Update(obj client.Object) error {
	if err := b.ResourceBuilder.Update(obj); err != nil {
		return err
	}
	obj.SetAnnotations(mergeStrings(obj.GetAnnotations(), map[string]string{RebalancePendingAnnotation: "true"}))
	return nil
}

// RebalancePendingAnnotation on the StatefulSet says that brokers were
// added with spec.rebalanceOnScaleUp and partitions have not been
// rebalanced onto them yet.
const RebalancePendingAnnotation = "kairolog.io/rebalance-pending"

// apply creates the child rb builds or brings an existing one up to date,
// writing only when something the operator owns differs. It returns nil
// (and records it) for a child the cluster does not control.
func (r *KairoClusterReconciler) apply(ctx context.Context, st *reconcileState, rb resources.ResourceBuilder) (client.Object, error) {
	c := st.cluster
	obj, err := rb.Build()
	if err != nil {
		return nil, err
	}
	key := client.ObjectKeyFromObject(obj)
	kind := kindOf(obj)
	if err := r.Get(ctx, key, obj); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
		if err := rb.Update(obj); err != nil {
			return nil, err
		}
		err := r.Create(ctx, obj)
		if err == nil {
			st.log.Info("Created child", "kind", kind, "name", key.Name)
			r.event(c, obj, corev1.EventTypeNormal, ReasonCreated, "Create", "Created %s %s", kind, key.Name)
			return obj, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		// It exists without the operator's labels, so the cache does not
		// hold it: read it from the API server.
		if obj, err = rb.Build(); err != nil {
			return nil, err
		}
		if err := r.APIReader.Get(ctx, key, obj); err != nil {
			return nil, err
		}
	}
	if !metav1.IsControlledBy(obj, c) {
		st.log.Info("Child exists and is not owned by the cluster; leaving it alone", "kind", kind, "name", key.Name)
		st.notOwned = append(st.notOwned, kind+" "+key.Name)
		return nil, nil
	}
	before := obj.DeepCopyObject()
	if err := rb.Update(obj); err != nil {
		return nil, err
	}
	if equality.Semantic.DeepEqual(before, obj) {
		return obj, nil
	}
	if err := r.Update(ctx, obj); err != nil {
		return nil, err
	}
	st.log.Info("Updated child", "kind", kind, "name", key.Name)
	r.event(c, obj, corev1.EventTypeNormal, ReasonUpdated, "Update", "Updated %s %s", kind, key.Name)
	return obj, nil
}

// deleteBudget removes the cluster's PodDisruptionBudget once the spec
// disables it.
func (r *KairoClusterReconciler) deleteBudget(ctx context.Context, st *reconcileState) error {
	c := st.cluster
	pdb := &policyv1.PodDisruptionBudget{}
	err := r.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: resources.PodDisruptionBudgetName(c)}, pdb)
	if apierrors.IsNotFound(err) || (err == nil && !metav1.IsControlledBy(pdb, c)) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := r.Delete(ctx, pdb, client.Preconditions{UID: &pdb.UID}); client.IgnoreNotFound(err) != nil {
		return err
	}
	r.event(c, pdb, corev1.EventTypeNormal, ReasonDeleted, "Delete", "Deleted PodDisruptionBudget %s", pdb.Name)
	return nil
}

// deleteNetworkPolicy removes the cluster's NetworkPolicy once
// spec.security.networkPolicy is Disabled.
func (r *KairoClusterReconciler) deleteNetworkPolicy(ctx context.Context, st *reconcileState) error {
	c := st.cluster
	np := &networkingv1.NetworkPolicy{}
	err := r.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: resources.NetworkPolicyName(c)}, np)
	if apierrors.IsNotFound(err) || (err == nil && !metav1.IsControlledBy(np, c)) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := r.Delete(ctx, np, client.Preconditions{UID: &np.UID}); client.IgnoreNotFound(err) != nil {
		return err
	}
	r.event(c, np, corev1.EventTypeNormal, ReasonDeleted, "Delete", "Deleted NetworkPolicy %s", np.Name)
	return nil
}

func kindOf(obj client.Object) string { return reflect.TypeOf(obj).Elem().Name() }

func mergeStrings(dst, src map[string]string) map[string]string {
	if dst == nil {
		dst = map[string]string{}
	}
	for k, v := range src {
		dst[k] = v
	}
	return dst
}
