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
// Topic and ConsumerGroup. Each reconciler's RBAC markers sit above its
// Reconcile; `make manifests` turns them into config/rbac/role.yaml. The
// reconcilers reach brokers only through BrokerClients, and the children of
// a KairoCluster are built by package resources.
package controllers
