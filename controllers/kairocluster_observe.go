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
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/controllers/resources"
)

// observe reads the brokers' pods and volume claims from the cache and the
// cluster metadata from the broker admin API (one call). An unreachable
// admin API is not an error of the pass: it is recorded, reported as a
// condition, and retried with a growing delay; the phases that need the
// brokers wait.
func (r *KairoClusterReconciler) observe(ctx context.Context, st *reconcileState) (bool, error) {
	c := st.cluster
	selector := client.MatchingLabels(resources.SelectorLabels(c))
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(c.Namespace), selector); err != nil {
		return false, err
	}
	st.pods = map[int32]*corev1.Pod{}
	for i := range pods.Items {
		if id, ok := ordinal(c, pods.Items[i].Name, ""); ok {
			st.pods[id] = &pods.Items[i]
		}
	}
	var claims corev1.PersistentVolumeClaimList
	if err := r.List(ctx, &claims, client.InNamespace(c.Namespace), selector); err != nil {
		return false, err
	}
	st.claims = map[int32]*corev1.PersistentVolumeClaim{}
	for i := range claims.Items {
		if id, ok := ordinal(c, claims.Items[i].Name, resources.DataVolume+"-"); ok {
			st.claims[id] = &claims.Items[i]
		}
	}

	bc, err := r.Brokers.For(c)
	if err != nil {
		st.brokerErr = err
		return true, nil
	}
	st.brokers = bc
	if st.meta, err = bc.Metadata(ctx); err != nil {
		st.meta, st.brokerErr = nil, err
		st.log.V(1).Info("Broker admin API unreachable", "endpoint", bc.Address(), "error", err.Error())
	}
	return true, nil
}

// ordinal parses the broker id from "<prefix><statefulset>-<id>".
func ordinal(c *kairov1alpha1.KairoCluster, name, prefix string) (int32, bool) {
	rest, ok := strings.CutPrefix(name, prefix+resources.StatefulSetName(c)+"-")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 32)
	if err != nil || id < 0 {
		return 0, false
	}
	return int32(id), true
}

// broker is broker id as the metadata describes it, or nil.
func (st *reconcileState) broker(id int32) *api.BrokerInfo {
	if st.meta == nil {
		return nil
	}
	for i := range st.meta.Brokers {
		if st.meta.Brokers[i].ID == id {
			return &st.meta.Brokers[i]
		}
	}
	return nil
}

// replicas is how many brokers the StatefulSet runs now.
func (st *reconcileState) replicas() int32 {
	if st.sts == nil || st.sts.Spec.Replicas == nil {
		return 0
	}
	return *st.sts.Spec.Replicas
}

// readyPods counts the ready pods among the StatefulSet's ordinals.
func (st *reconcileState) readyPods() int32 {
	var n int32
	for id, pod := range st.pods {
		if id < st.replicas() && pod.DeletionTimestamp.IsZero() && podReady(pod) {
			n++
		}
	}
	return n
}

// created reports whether the brokers ever formed a cluster the operator
// observed, which tells creating from every later change.
func (st *reconcileState) created() bool {
	return st.cluster.Status.ControllerID != nil || st.meta != nil
}
