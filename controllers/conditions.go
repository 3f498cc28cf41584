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

// conditions.go is the vocabulary a user meets in `kubectl describe`: every
// reason of a condition (types Ready, Progressing and Degraded, declared in
// api/v1alpha1) and of an event the reconcilers record, each declared once
// and in UpperCamelCase. A condition turning False, or Degraded turning True,
// is also an event with the condition's reason; the groups below say which
// reasons appear on events only. docs/operations.md explains every one (a
// test checks that, and another that no reason is declared elsewhere).

// KairoCluster: Ready, Progressing and Degraded.
const (
	// ReasonCreating: the StatefulSet is being created or its first brokers
	// are starting (Ready False, Progressing True).
	ReasonCreating = "Creating"
	// ReasonClusterReady: every broker is ready and alive (Ready True).
	ReasonClusterReady = "ClusterReady"
	// ReasonBrokersNotReady: some pods are not ready or some brokers are not
	// alive in the metadata (Ready False).
	ReasonBrokersNotReady = "BrokersNotReady"
	// ReasonBrokerUnreachable: the brokers' admin API cannot be reached.
	ReasonBrokerUnreachable = "BrokerUnreachable"
	// ReasonUnderReplicated: partitions short of in-sync replicas, or fenced
	// brokers (Degraded True).
	ReasonUnderReplicated = "UnderReplicated"
	// ReasonUpToDate: the brokers run the current spec (Progressing False).
	ReasonUpToDate = "UpToDate"
	// ReasonAsExpected: no problem found (Degraded False).
	ReasonAsExpected = "AsExpected"
	// ReasonResourceNotOwned: a child the operator needs exists and is not
	// the cluster's; it is never adopted or overwritten.
	ReasonResourceNotOwned = "ResourceNotOwned"

	// Scaling.
	ReasonScalingUp        = "ScalingUp"
	ReasonRebalancing      = "Rebalancing"
	ReasonDraining         = "Draining"
	ReasonScalingDown      = "ScalingDown"
	ReasonScaleDownRefused = "ScaleDownRefused"
	ReasonDrainCancelled   = "DrainCancelled"
	ReasonBrokerWithoutPod = "BrokerWithoutPod"

	// Storage.
	ReasonResizingStorage          = "ResizingStorage"
	ReasonStorageResizeUnsupported = "StorageResizeUnsupported"

	// Restarts.
	ReasonRollingRestart = "RollingRestart"

	// ReasonCAUnusable: the CA Secret spec.security.ca.secretName names is
	// missing, does not hold a CA with its key, or the CA expired (Degraded
	// True).
	ReasonCAUnusable = "CAUnusable"
	// ReasonWaitingForIssuer: a cert-manager issuer (spec.security.ca.issuerRef)
	// has not issued every certificate yet (Progressing True); the
	// message carries the Certificates' own reasons.
	ReasonWaitingForIssuer = "WaitingForIssuer"
)

// KairoCluster: QuorumFaultTolerant, whether the metadata quorum goes on
// through the restart or loss of any one broker.
const (
	// ReasonToleratesBrokerLoss: three or more voters (True).
	ReasonToleratesBrokerLoss = "ToleratesBrokerLoss"
	// ReasonOneVoter: one voter, which stops the quorum while it restarts
	// or is down (False).
	ReasonOneVoter = "OneVoter"
	// ReasonTwoVoters: two voters, both needed for a majority (False).
	ReasonTwoVoters = "TwoVoters"
)

// KairoCluster: events only.
const (
	// ReasonDeleted: a child the cluster no longer needs was deleted.
	ReasonDeleted = "Deleted"
	// ReasonBrokerRemoved: a drained broker was removed from the metadata.
	ReasonBrokerRemoved = "BrokerRemoved"
	// ReasonRestartingBroker: one broker's pod is deleted to restart it.
	ReasonRestartingBroker = "RestartingBroker"
	// ReasonRecovered: the cluster is no longer Degraded.
	ReasonRecovered = "Recovered"
	// ReasonQuorumReduced: a two-voter quorum an earlier operator created
	// was reduced to one voter.
	ReasonQuorumReduced = "QuorumReduced"
	// ReasonCARenewed: the operator created or renewed the cluster CA.
	ReasonCARenewed = "CARenewed"
	// ReasonCertificatesRenewed: the broker certificates were reissued
	// (renewal, or a new CA); the brokers restart one at a time.
	ReasonCertificatesRenewed = "CertificatesRenewed"
)

// Shared by KairoCluster children (events) and Topic (Ready True).
const (
	// ReasonCreated: the operator created the child, or the topic.
	ReasonCreated = "Created"
	// ReasonUpdated: the child, or the topic's partitions, config or
	// replicas, were changed to match the spec.
	ReasonUpdated = "Updated"
)

// Topic and ConsumerGroup: Ready False.
const (
	// ReasonClusterNotReady: the KairoCluster does not exist, is being
	// deleted, or its brokers are unreachable or not ready.
	ReasonClusterNotReady = "ClusterNotReady"
	// ReasonBrokerError: the brokers refused a request.
	ReasonBrokerError = "BrokerError"
	// ReasonConflict: an older resource manages the same name on the cluster.
	ReasonConflict = "Conflict"
	// ReasonNotSupported: the brokers cannot do what the spec asks.
	ReasonNotSupported = "NotSupported"
)

// Topic and ConsumerGroup: events on deletion.
const (
	// ReasonFinalizerReleased: the cluster is gone or going; nothing was
	// deleted on the brokers.
	ReasonFinalizerReleased = "FinalizerReleased"
	// ReasonHandedOver: another live resource still manages the name.
	ReasonHandedOver = "HandedOver"
)

// Topic: Ready.
const (
	// ReasonAdopted: the topic already existed and the operator took it over.
	ReasonAdopted = "Adopted"
	// ReasonRecreated: the topic was deleted out of band and created again
	// because spec.recreateIfDeleted asks for it.
	ReasonRecreated = "Recreated"
	// ReasonInSync: the topic matched the spec without any change.
	ReasonInSync = "InSync"
	// ReasonIncompatible: a topic of that name exists with more partitions
	// or other replicas than the spec, so it was not adopted.
	ReasonIncompatible = "Incompatible"
	// ReasonDeletedOutOfBand: the topic was deleted on the brokers by
	// someone else and spec.recreateIfDeleted is off.
	ReasonDeletedOutOfBand = "DeletedOutOfBand"
	// ReasonReassigning: a replication-factor change is moving replicas.
	ReasonReassigning = "Reassigning"
)

// Topic: events.
const (
	ReasonTopicCreated          = "TopicCreated"
	ReasonTopicAdopted          = "TopicAdopted"
	ReasonTopicRecreated        = "TopicRecreated"
	ReasonTopicReplaced         = "TopicReplacedOutOfBand"
	ReasonTopicDeletedOutOfBand = "TopicDeletedOutOfBand"
	ReasonTopicDeleted          = "TopicDeleted"
	ReasonTopicRetained         = "TopicRetained"
	ReasonTopicNotOwned         = "TopicNotOwned"
	ReasonPartitionsIncreased   = "PartitionsIncreased"
	ReasonConfigUpdated         = "ConfigUpdated"
	ReasonConfigDriftReverted   = "ConfigDriftReverted"
	ReasonReplicasChanging      = "ReplicasChanging"
)

// ConsumerGroup: Ready.
const (
	// ReasonObserved: the group was observed and matches the spec.
	ReasonObserved = "Observed"
	// ReasonConfigured: the group's session timeout or assignment strategy
	// was set to the spec in this pass.
	ReasonConfigured = "Configured"
	// ReasonOffsetResetPending: an offset reset waits for the group to have
	// no active members. Its event is Normal: waiting is expected.
	ReasonOffsetResetPending = "OffsetResetPending"
	// ReasonTopicNotFound: a topic of spec.topics does not exist.
	ReasonTopicNotFound = "TopicNotFound"
	// ReasonGroupNotEmpty: deleting the group's offsets waits for its
	// members to leave.
	ReasonGroupNotEmpty = "GroupNotEmpty"
)

// ConsumerGroup: events.
const (
	ReasonGroupConfigured          = "GroupConfigured"
	ReasonGroupConfigDriftReverted = "GroupConfigDriftReverted"
	ReasonOffsetResetApplied       = "OffsetResetApplied"
	ReasonOffsetResetFailed        = "OffsetResetFailed"
	ReasonGroupDeleted             = "GroupDeleted"
	ReasonGroupRetained            = "GroupRetained"
)

// KairoUser: Ready.
const (
	// ReasonCredentialsIssued: the user's password or client certificate
	// is in its Secret (Ready True; also an event when written).
	ReasonCredentialsIssued = "CredentialsIssued"
	// ReasonPasswordNotFound: the Secret key spec.authentication.password
	// names does not exist.
	ReasonPasswordNotFound = "PasswordNotFound"
	// ReasonUserApplied: the credentials are in the Secret and the brokers
	// hold the user's credential and ACLs (Ready True; also an event when
	// the operator wrote them to the brokers).
	ReasonUserApplied = "UserApplied"
	// ReasonUserDeleted: the brokers forgot the user of a deleted KairoUser
	// (an event).
	ReasonUserDeleted = "UserDeleted"
)
