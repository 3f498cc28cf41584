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

package resources

import (
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// PodDisruptionBudgetBuilder builds the budget that lets voluntary
// disruptions (node drains) take down one broker at a time, the same rule
// the operator's own restarts follow.
type PodDisruptionBudgetBuilder struct{ *Builder }

// PodDisruptionBudgetEnabled is false only when spec.podDisruptionBudget
// says enabled: false.
func PodDisruptionBudgetEnabled(c *kairov1alpha1.KairoCluster) bool {
	pdb := c.Spec.PodDisruptionBudget
	return pdb == nil || pdb.Enabled == nil || *pdb.Enabled
}

// Build returns the budget named after the cluster.
func (b *PodDisruptionBudgetBuilder) Build() (client.Object, error) {
	return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{
		Name: PodDisruptionBudgetName(b.Cluster), Namespace: b.Cluster.Namespace}}, nil
}

// Update sets maxUnavailable (1 unless the spec says otherwise) and the
// selector.
func (b *PodDisruptionBudgetBuilder) Update(obj client.Object) error {
	pdb, ok := obj.(*policyv1.PodDisruptionBudget)
	if !ok {
		return fmt.Errorf("resources: PodDisruptionBudgetBuilder got %T", obj)
	}
	b.mergeLabels(pdb)
	maxUnavailable := intstr.FromInt32(1)
	if spec := b.Cluster.Spec.PodDisruptionBudget; spec != nil && spec.MaxUnavailable != nil {
		maxUnavailable = *spec.MaxUnavailable
	}
	pdb.Spec.MaxUnavailable = &maxUnavailable
	pdb.Spec.MinAvailable = nil
	pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: SelectorLabels(b.Cluster)}
	return b.own(pdb)
}
