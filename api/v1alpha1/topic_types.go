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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TopicSpec is the desired state of a topic on a KairoCluster.
// +kubebuilder:validation:XValidation:rule="!has(self.config) || !('min.insync.replicas' in self.config) || !has(self.replicas) || int(self.config['min.insync.replicas']) <= self.replicas",message="config min.insync.replicas cannot exceed replicas"
type TopicSpec struct {
	// clusterRef names the KairoCluster that holds the topic. Immutable.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterRef is immutable"
	ClusterRef ClusterReference `json:"clusterRef"`

	// topicName is the topic's name on the brokers; defaults to the resource
	// name. It cannot change once set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=249
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9._-]+$`
	// +kubebuilder:validation:XValidation:rule="self != '.' && self != '..' && !self.startsWith('__')",message="topicName cannot be '.', '..' or start with '__' (reserved for internal topics)"
	TopicName string `json:"topicName,omitempty"`

	// partitions is the number of partitions. It can grow but never shrink:
	// records are placed by partition, so removing one would lose or reorder them.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="partitions cannot be decreased"
	Partitions int32 `json:"partitions,omitempty"`

	// replicas is the replication factor. When empty the cluster's
	// default.replication.factor is used.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Replicas *int32 `json:"replicas,omitempty"`

	// config holds topic settings that override the cluster defaults: the
	// keys of docs/configuration.md, each within the bounds the brokers
	// accept.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	Config TopicConfig `json:"config,omitempty"`

	// deletionPolicy: Delete removes the topic and its data from the brokers
	// when this resource is deleted; Retain leaves it.
	// +optional
	// +kubebuilder:default=Delete
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// recreateIfDeleted makes the operator create the topic again when it is
	// deleted on the brokers by someone else. Off by default: the deletion is
	// reported in the Ready condition and an event, and nothing is recreated.
	// +optional
	RecreateIfDeleted bool `json:"recreateIfDeleted,omitempty"`
}

// PartitionStatus is one partition as the brokers report it.
type PartitionStatus struct {
	// partition number.
	Partition int32 `json:"partition"`

	// leader broker id, -1 when the partition has no leader.
	Leader int32 `json:"leader"`

	// replicas holding the partition, the preferred leader first.
	// +optional
	// +listType=atomic
	Replicas []int32 `json:"replicas,omitempty"`

	// isr is the in-sync replica set.
	// +optional
	// +listType=atomic
	ISR []int32 `json:"isr,omitempty"`

	// highWatermark is the offset below which records are committed.
	// +optional
	HighWatermark int64 `json:"highWatermark,omitempty"`
}

// TopicStatus is what the operator observed of the topic.
type TopicStatus struct {
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// topicName on the brokers.
	// +optional
	TopicName string `json:"topicName,omitempty"`

	// topicId is the broker-assigned unique id; it changes if the topic is
	// deleted and created again.
	// +optional
	TopicID string `json:"topicId,omitempty"`

	// partitions on the brokers.
	// +optional
	Partitions int32 `json:"partitions,omitempty"`

	// replicas is the replication factor on the brokers.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// underReplicatedPartitions counts partitions whose in-sync replica set is
	// smaller than their replica set.
	// +optional
	UnderReplicatedPartitions int32 `json:"underReplicatedPartitions,omitempty"`

	// offlinePartitions counts partitions without a leader.
	// +optional
	OfflinePartitions int32 `json:"offlinePartitions,omitempty"`

	// partitionStatuses lists every partition's leader, replicas, ISR and high watermark.
	// +optional
	// +listType=map
	// +listMapKey=partition
	PartitionStatuses []PartitionStatus `json:"partitionStatuses,omitempty"`

	// conditions: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Topic is a KairoLog topic, created and kept in line with this spec on the
// referenced KairoCluster.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kt,categories=kairolog
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec.topicName) || (has(self.spec.topicName) && self.spec.topicName == oldSelf.spec.topicName)",message="spec.topicName is immutable once set"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.spec.topicName) || !has(self.spec.topicName) || self.spec.topicName == self.metadata.name",message="spec.topicName can only be set to the resource name after creation"
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterRef.name`
// +kubebuilder:printcolumn:name="Topic",type=string,JSONPath=`.status.topicName`,priority=1
// +kubebuilder:printcolumn:name="Partitions",type=integer,JSONPath=`.spec.partitions`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.replicas`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Topic struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the topic.
	// +required
	Spec TopicSpec `json:"spec"`

	// status is the observed state of the topic.
	// +optional
	Status TopicStatus `json:"status,omitempty"`
}

// TopicList contains a list of Topic.
// +kubebuilder:object:root=true
type TopicList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Topic `json:"items"`
}

func init() {
	register(&Topic{}, &TopicList{})
}
