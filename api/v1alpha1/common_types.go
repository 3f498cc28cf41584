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

package v1alpha1

// ClusterReference names the KairoCluster a Topic or ConsumerGroup belongs to.
// The cluster must be in the same namespace.
type ClusterReference struct {
	// name of the KairoCluster in the same namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
}

// DeletionPolicy says what happens on the brokers when a resource is deleted.
// +kubebuilder:validation:Enum=Delete;Retain
type DeletionPolicy string

const (
	// DeletionPolicyDelete removes the broker-side object (topic data, committed offsets).
	DeletionPolicyDelete DeletionPolicy = "Delete"
	// DeletionPolicyRetain leaves the broker-side object in place.
	DeletionPolicyRetain DeletionPolicy = "Retain"
)

// Condition types shared by every KairoLog resource.
const (
	// ConditionReady is True when the resource is in the state its spec asks for.
	ConditionReady = "Ready"
	// ConditionProgressing is True while the operator is changing a KairoCluster.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when a KairoCluster cannot serve or be changed safely.
	ConditionDegraded = "Degraded"
	// ConditionQuorumFaultTolerant is True when a KairoCluster's metadata
	// quorum goes on through the restart or loss of any one broker.
	ConditionQuorumFaultTolerant = "QuorumFaultTolerant"
)

// FinalizerName guards broker-side cleanup of Topics, ConsumerGroups and
// KairoUsers.
const FinalizerName = "kairolog.io/finalizer"

// EndpointOverrideAnnotation on a KairoCluster points the operator at a broker
// address other than the in-cluster client Service, for example
// "http://127.0.0.1:8080" when the manager runs outside the cluster.
const EndpointOverrideAnnotation = "kairolog.io/endpoint-override"
