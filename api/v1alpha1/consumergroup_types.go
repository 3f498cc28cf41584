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

// AssignmentStrategy is how a group's partitions are split among its members.
// +kubebuilder:validation:Enum=range;roundrobin
type AssignmentStrategy string

const (
	// AssignmentRange gives each member a contiguous range of each topic's partitions.
	AssignmentRange AssignmentStrategy = "range"
	// AssignmentRoundRobin deals partitions out to members in turn.
	AssignmentRoundRobin AssignmentStrategy = "roundrobin"
)

// OffsetResetTarget is where an offset reset moves the committed offsets.
// +kubebuilder:validation:Enum=earliest;latest;offset;timestamp
type OffsetResetTarget string

const (
	// ResetToEarliest moves offsets to each partition's log start offset.
	ResetToEarliest OffsetResetTarget = "earliest"
	// ResetToLatest moves offsets to each partition's high watermark.
	ResetToLatest OffsetResetTarget = "latest"
	// ResetToOffset moves offsets to a given offset.
	ResetToOffset OffsetResetTarget = "offset"
	// ResetToTimestamp moves offsets to the first record at or after a time.
	ResetToTimestamp OffsetResetTarget = "timestamp"
)

// OffsetReset is a one-shot request to move a group's committed offsets. It
// is applied once per requestId, and only while the group has no active
// members (a running consumer would overwrite it at its next commit).
// +kubebuilder:validation:XValidation:rule="self.to != 'offset' || has(self.offset)",message="offset is required when to is offset"
// +kubebuilder:validation:XValidation:rule="self.to != 'timestamp' || has(self.timestamp)",message="timestamp is required when to is timestamp"
// +kubebuilder:validation:XValidation:rule="!has(self.offset) || self.to == 'offset'",message="offset is only allowed when to is offset"
// +kubebuilder:validation:XValidation:rule="!has(self.timestamp) || self.to == 'timestamp'",message="timestamp is only allowed when to is timestamp"
type OffsetReset struct {
	// requestId identifies this request; change it to ask for another reset.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	RequestID string `json:"requestId"`

	// to is where the offsets move: earliest, latest, offset or timestamp.
	// +required
	To OffsetResetTarget `json:"to"`

	// offset to move to when to is "offset".
	// +optional
	// +kubebuilder:validation:Minimum=0
	Offset *int64 `json:"offset,omitempty"`

	// timestamp to move to when to is "timestamp": each partition's first
	// record at or after this time.
	// +optional
	Timestamp *metav1.Time `json:"timestamp,omitempty"`

	// topics whose offsets move; defaults to spec.topics.
	// +optional
	// +listType=set
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=249
	// +kubebuilder:validation:items:Pattern=`^[a-zA-Z0-9._-]+$`
	Topics []string `json:"topics,omitempty"`
}

// ConsumerGroupSpec describes a consumer group the operator observes and, when
// asked, configures or resets. Groups are created by consumers joining them;
// this resource does not create members.
type ConsumerGroupSpec struct {
	// clusterRef names the KairoCluster that holds the group. Immutable.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterRef is immutable"
	ClusterRef ClusterReference `json:"clusterRef"`

	// groupId is the group's id on the brokers; defaults to the resource
	// name. It cannot change once set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=249
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9._-]+$`
	GroupID string `json:"groupId,omitempty"`

	// topics whose committed offsets and lag are reported in status.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=249
	// +kubebuilder:validation:items:Pattern=`^[a-zA-Z0-9._-]+$`
	Topics []string `json:"topics,omitempty"`

	// sessionTimeout is how long the broker waits for a member's heartbeat
	// before removing it from the group and rebalancing, for example "45s".
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('1h')",message="sessionTimeout must be between 1s and 1h"
	SessionTimeout *metav1.Duration `json:"sessionTimeout,omitempty"`

	// assignmentStrategy the broker uses to split partitions among members.
	// +optional
	// +kubebuilder:default=range
	AssignmentStrategy AssignmentStrategy `json:"assignmentStrategy,omitempty"`

	// offsetReset moves the group's committed offsets once per requestId,
	// while the group has no active members.
	// +optional
	OffsetReset *OffsetReset `json:"offsetReset,omitempty"`

	// deletionPolicy: Delete removes the group's committed offsets from the
	// brokers when this resource is deleted; Retain (the default) leaves them.
	// +optional
	// +kubebuilder:default=Retain
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
}

// TopicPartitions lists partitions of one topic.
type TopicPartitions struct {
	// topic name.
	Topic string `json:"topic"`

	// partitions of the topic.
	// +listType=atomic
	Partitions []int32 `json:"partitions"`
}

// GroupMemberStatus is one member of the group.
type GroupMemberStatus struct {
	// id the broker gave the member.
	ID string `json:"id"`

	// clientId the member reported.
	// +optional
	ClientID string `json:"clientId,omitempty"`

	// lastSeen is the member's last heartbeat.
	// +optional
	LastSeen *metav1.Time `json:"lastSeen,omitempty"`

	// assignment is the partitions the member consumes.
	// +optional
	// +listType=atomic
	Assignment []TopicPartitions `json:"assignment,omitempty"`
}

// PartitionOffsetStatus is a group's position in one partition.
type PartitionOffsetStatus struct {
	// topic name.
	Topic string `json:"topic"`

	// partition number.
	Partition int32 `json:"partition"`

	// committedOffset is the next offset the group will read; -1 when nothing is committed.
	CommittedOffset int64 `json:"committedOffset"`

	// highWatermark of the partition.
	// +optional
	HighWatermark int64 `json:"highWatermark,omitempty"`

	// lag is how many committed records the group has not consumed.
	// +optional
	Lag int64 `json:"lag,omitempty"`
}

// OffsetResetStatus records the last offset reset the operator handled.
type OffsetResetStatus struct {
	// requestId of the reset.
	RequestID string `json:"requestId"`

	// result: Applied, or Failed with the message.
	Result string `json:"result"`

	// message says what was moved or why it failed.
	// +optional
	Message string `json:"message,omitempty"`

	// time the reset was handled.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
}

// ConsumerGroupStatus is what the operator observed of the group.
type ConsumerGroupStatus struct {
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// groupId on the brokers.
	// +optional
	GroupID string `json:"groupId,omitempty"`

	// state of the group: Empty, PreparingRebalance, CompletingRebalance, Stable, Dead, or Unknown.
	// +optional
	State string `json:"state,omitempty"`

	// generation of the group's current assignment.
	// +optional
	Generation int32 `json:"generation,omitempty"`

	// memberCount is the number of members.
	// +optional
	MemberCount int32 `json:"memberCount,omitempty"`

	// members of the group.
	// +optional
	// +listType=map
	// +listMapKey=id
	Members []GroupMemberStatus `json:"members,omitempty"`

	// offsets: the group's committed offset and lag for every partition of spec.topics.
	// +optional
	// +listType=atomic
	Offsets []PartitionOffsetStatus `json:"offsets,omitempty"`

	// totalLag is the sum of lag over offsets.
	// +optional
	TotalLag int64 `json:"totalLag,omitempty"`

	// lastOffsetReset is the last offset reset request handled.
	// +optional
	LastOffsetReset *OffsetResetStatus `json:"lastOffsetReset,omitempty"`

	// conditions: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ConsumerGroup observes a consumer group on a KairoCluster — its state,
// members, committed offsets and lag — and applies its session timeout,
// assignment strategy and one-shot offset resets.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kcg,categories=kairolog
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec.groupId) || (has(self.spec.groupId) && self.spec.groupId == oldSelf.spec.groupId)",message="spec.groupId is immutable once set"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.spec.groupId) || !has(self.spec.groupId) || self.spec.groupId == self.metadata.name",message="spec.groupId can only be set to the resource name after creation"
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterRef.name`
// +kubebuilder:printcolumn:name="Group",type=string,JSONPath=`.status.groupId`,priority=1
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Members",type=integer,JSONPath=`.status.memberCount`
// +kubebuilder:printcolumn:name="Lag",type=integer,JSONPath=`.status.totalLag`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ConsumerGroup struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what the operator applies to the group.
	// +required
	Spec ConsumerGroupSpec `json:"spec"`

	// status is the observed state of the group.
	// +optional
	Status ConsumerGroupStatus `json:"status,omitempty"`
}

// ConsumerGroupList contains a list of ConsumerGroup.
// +kubebuilder:object:root=true
type ConsumerGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ConsumerGroup `json:"items"`
}

func init() {
	register(&ConsumerGroup{}, &ConsumerGroupList{})
}
