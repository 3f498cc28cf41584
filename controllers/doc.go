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

// Package controllers holds one reconciler per KairoLog Kind: KairoCluster,
// Topic and ConsumerGroup.
package controllers

// The manager's permissions. They move above each reconciler's Reconcile as
// the reconcilers land.
// +kubebuilder:rbac:groups=kairolog.io,resources=kairoclusters;topics;consumergroups,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kairolog.io,resources=kairoclusters/status;topics/status;consumergroups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kairolog.io,resources=kairoclusters/finalizers;topics/finalizers;consumergroups/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=services;configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=core,resources=persistentvolumeclaims,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch
