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
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// resizeStorage grows the brokers' volume claims to spec.storage.size.
//
// A StatefulSet's volumeClaimTemplates cannot change, so the claims are
// resized one by one (the template keeps the size the cluster was created
// with, and a claim created later by a scale up is grown the same way).
// Kubernetes grows only bound claims whose StorageClass allows volume
// expansion; otherwise the Degraded condition says why nothing happens.
// Shrinking is refused by the API's validation.
func (r *KairoClusterReconciler) resizeStorage(ctx context.Context, st *reconcileState) (bool, error) {
	want := st.cluster.Spec.Storage.Size
	var grow []*corev1.PersistentVolumeClaim
	growing, unbound := 0, 0
	for id, pvc := range st.claims {
		if id >= st.replicas() || !pvc.DeletionTimestamp.IsZero() {
			continue // a removed broker's retained claim
		}
		if pvc.Spec.Resources.Requests.Storage().Cmp(want) < 0 {
			grow = append(grow, pvc)
		} else if pvc.Status.Phase == corev1.ClaimBound && pvc.Status.Capacity.Storage().Cmp(want) < 0 {
			growing++
		}
	}
	slices.SortFunc(grow, func(a, b *corev1.PersistentVolumeClaim) int { return strings.Compare(a.Name, b.Name) })
	for _, pvc := range grow {
		ok, why, err := r.expansionAllowed(ctx, pvc)
		if err != nil {
			return false, err
		}
		if !ok {
			st.degrade(ReasonStorageResizeUnsupported, fmt.Sprintf(
				"spec.storage.size is %s but volume claim %s cannot grow from %s: %s",
				want.String(), pvc.Name, pvc.Spec.Resources.Requests.Storage().String(), why))
			return true, nil
		}
		if pvc.Status.Phase != corev1.ClaimBound {
			unbound++ // Kubernetes resizes bound claims only.
			continue
		}
		from := pvc.Spec.Resources.Requests.Storage().DeepCopy()
		patch := client.MergeFrom(pvc.DeepCopy())
		pvc.Spec.Resources.Requests[corev1.ResourceStorage] = want
		if err := r.Patch(ctx, pvc, patch); err != nil {
			return false, err
		}
		growing++
		st.log.Info("Resizing volume claim", "claim", pvc.Name, "from", from.String(), "to", want.String())
		r.event(st.cluster, pvc, corev1.EventTypeNormal, ReasonResizingStorage, "Resize",
			"Resizing volume claim %s from %s to %s", pvc.Name, from.String(), want.String())
	}
	if growing > 0 || unbound > 0 {
		msg := fmt.Sprintf("%d volume claims growing to %s", growing, want.String())
		if unbound > 0 {
			msg += fmt.Sprintf("; %d wait to be bound before they can grow", unbound)
		}
		st.progress(ReasonResizingStorage, msg)
	}
	return true, nil
}

// expansionAllowed reports whether the claim's StorageClass allows volume
// expansion, and why not.
func (r *KairoClusterReconciler) expansionAllowed(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (bool, string, error) {
	name := ptr.Deref(pvc.Spec.StorageClassName, "")
	if name == "" {
		return false, "the claim has no StorageClass", nil
	}
	// Read directly: a resize is rare, and caching every StorageClass of the
	// cluster for it is not worth a watch.
	sc := &storagev1.StorageClass{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Name: name}, sc); err != nil {
		if apierrors.IsNotFound(err) {
			return false, fmt.Sprintf("StorageClass %s does not exist", name), nil
		}
		return false, "", err
	}
	if !ptr.Deref(sc.AllowVolumeExpansion, false) {
		return false, fmt.Sprintf("StorageClass %s does not allow volume expansion", name), nil
	}
	return true, "", nil
}
