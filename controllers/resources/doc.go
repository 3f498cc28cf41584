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

// Package resources builds the children of a KairoCluster: the broker
// ConfigMap, the headless and client Services, the StatefulSet and the
// PodDisruptionBudget. Builders are pure: they read the KairoCluster and the
// operator's decisions (replicas to run now, the metadata voters fixed at
// creation) and never call the API server, so they are unit-tested alone.
//
// Each child has a ResourceBuilder with Build, the skeleton a new object
// starts from (name, namespace and the fields Kubernetes will not let change
// later: a StatefulSet's selector, serviceName and volumeClaimTemplates),
// and Update, which sets every field the operator owns on a new or existing
// object and leaves fields the API server defaulted alone, so that applying
// an unchanged spec changes nothing.
package resources
