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

// Package controllers holds the reconcilers of the KairoLog Kinds.
//
// KairoClusterReconciler (kairocluster_*.go) runs a cluster as a list of
// phases over its children, which package resources builds. Topic and
// ConsumerGroup each manage one object on the brokers of a cluster, so they
// share one reconciler (brokerobject*.go): indexes and watches, claims and
// conflicts, waiting for the cluster, the finalizer, broker failures and the
// status write; a Kind adds only what it does on the brokers (topic_*.go,
// consumergroup_*.go).
//
// conditions.go holds every condition and event reason, timing.go every
// interval, events.go how events are recorded. RBAC markers sit above each
// Reconcile; `make manifests` turns them into config/rbac/role.yaml. The
// reconcilers reach brokers only through BrokerClients.
package controllers
