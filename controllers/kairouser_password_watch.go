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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// passwordSecretSource watches the password Secrets users supply. They
// carry no operator label, so the manager's cache, which holds only the
// Secrets the operator labels (CacheOptions), never sees them; a cache of
// their metadata alone (no data: the reconciler reads the password through
// the API reader) does. Any change to such a Secret wakes the KairoUsers
// that name it, so a new password reaches the brokers at once rather than at
// the next resync.
func (r *KairoUserReconciler) passwordSecretSource(mgr ctrl.Manager) (source.Source, error) {
	opts := cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultTransform: cache.TransformStripManagedFields()}
	if len(r.Namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range r.Namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	secrets, err := cache.New(mgr.GetConfig(), opts)
	if err != nil {
		return nil, fmt.Errorf("cache of Secret metadata: %w", err)
	}
	if err := mgr.Add(secrets); err != nil {
		return nil, err
	}
	secret := &metav1.PartialObjectMetadata{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return source.Kind(secrets, secret, handler.TypedEnqueueRequestsFromMapFunc(r.usersOfPasswordSecret)), nil
}

// usersOfPasswordSecret are the KairoUsers of the Secret's namespace whose
// supplied password it holds.
func (r *KairoUserReconciler) usersOfPasswordSecret(ctx context.Context, s *metav1.PartialObjectMetadata) []reconcile.Request {
	var users kairov1alpha1.KairoUserList
	if err := r.List(ctx, &users, client.InNamespace(s.Namespace)); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, u := range users.Items {
		if p := u.Spec.Authentication.Password; p != nil && p.ValueFrom.SecretKeyRef.Name == s.Name {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&u)})
		}
	}
	return out
}
