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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kairolog/kairolog/controllers/resources"
)

// CacheOptions is the manager's cache: it holds only the pods, volume
// claims, ConfigMaps, Secrets, Services, StatefulSets, disruption
// budgets and NetworkPolicies the operator labels (app.kubernetes.io/managed-by=kairolog-operator), not
// every one in the cluster, and only the given namespaces (all when none).
// The KairoCluster reconciler reads a child that exists without the label
// directly from the API server.
func CacheOptions(namespaces []string) cache.Options {
	managed := labels.SelectorFromSet(labels.Set{resources.LabelManagedBy: resources.ManagedBy})
	opts := cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}:                   {Label: managed},
		&corev1.PersistentVolumeClaim{}: {Label: managed},
		&corev1.ConfigMap{}:             {Label: managed},
		&corev1.Secret{}:                {Label: managed},
		&corev1.Service{}:               {Label: managed},
		&appsv1.StatefulSet{}:           {Label: managed},
		&policyv1.PodDisruptionBudget{}: {Label: managed},
		&networkingv1.NetworkPolicy{}:   {Label: managed},
	}}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}
