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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// KairoClusterSpec is the desired state of a KairoLog cluster: how many
// brokers, which image, their storage and configuration, and how pods are
// placed.
type KairoClusterSpec struct {
	// replicas is the number of brokers. The first three brokers at creation
	// are the voters of the metadata quorum; with fewer than three brokers,
	// only the first is (two voters would stop the quorum whenever either
	// restarts). The status condition QuorumFaultTolerant says what the
	// quorum survives.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Replicas int32 `json:"replicas,omitempty"`

	// image is the broker container image. When empty the operator's default
	// broker image is used.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// imagePullPolicy for the broker container.
	// +optional
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// imagePullSecrets for the broker pods.
	// +optional
	// +listType=atomic
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// storage is the persistent volume each broker keeps its log on.
	// +required
	Storage StorageSpec `json:"storage"`

	// resources of the broker container; a memory limit also sets the
	// broker's GOMEMLIMIT to 90 % of it (unless podTemplate.env sets it),
	// which the broker sizes its garbage collection from.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// config holds broker settings (Java-properties keys such as
	// "min.insync.replicas" or "log.retention.ms") merged over the operator's
	// defaults. A change restarts brokers one at a time.
	// +optional
	// +kubebuilder:validation:MaxProperties=100
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[a-z][a-z0-9]*([._-][a-z0-9]+)*$'))",message="config keys are lower-case dotted names such as min.insync.replicas"
	// +kubebuilder:validation:XValidation:rule="!('broker.id' in self) && !('node.id' in self) && !('listeners' in self) && !('log.dirs' in self)",message="broker.id, node.id, listeners and log.dirs are set by the operator"
	Config map[string]string `json:"config,omitempty"`

	// podTemplate overrides parts of the broker pod template.
	// +optional
	PodTemplate *PodTemplateOverrides `json:"podTemplate,omitempty"`

	// rack makes the brokers rack aware: each broker's rack is the value of
	// this node label on the node it runs on, and replicas of a partition are
	// spread across racks.
	// +optional
	Rack *RackSpec `json:"rack,omitempty"`

	// service configures the client Service.
	// +optional
	// +kubebuilder:default={}
	Service ServiceSpec `json:"service,omitempty"`

	// podDisruptionBudget for the broker pods.
	// +optional
	PodDisruptionBudget *PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty"`

	// metrics configures the Prometheus endpoint of the brokers.
	// +optional
	Metrics *MetricsSpec `json:"metrics,omitempty"`

	// security: the cluster CA, TLS and authentication per listener,
	// authorization and the NetworkPolicy.
	// +optional
	Security *SecuritySpec `json:"security,omitempty"`

	// rebalanceOnScaleUp moves partition replicas onto new brokers after a
	// scale up. Off by default: new brokers then only get new partitions.
	// +optional
	RebalanceOnScaleUp bool `json:"rebalanceOnScaleUp,omitempty"`
}

// StorageSpec is the persistent volume of one broker.
type StorageSpec struct {
	// size of each broker's volume, as a quantity such as "10Gi". It can grow
	// (when the StorageClass allows volume expansion) but never shrink.
	// +required
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="storage size must be positive"
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).compareTo(quantity(string(oldSelf))) >= 0",message="storage size cannot shrink"
	Size resource.Quantity `json:"size"`

	// storageClassName of the volume claims; empty means the cluster default.
	// It cannot change after creation.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storageClassName is immutable"
	StorageClassName *string `json:"storageClassName,omitempty"`

	// retentionPolicy says whether volume claims are kept when brokers are
	// removed by a scale down or when the cluster is deleted.
	// +optional
	RetentionPolicy *StorageRetentionPolicy `json:"retentionPolicy,omitempty"`
}

// ClaimRetention is what happens to a broker's volume claim.
// +kubebuilder:validation:Enum=Retain;Delete
type ClaimRetention string

const (
	// ClaimRetain keeps the volume claim.
	ClaimRetain ClaimRetention = "Retain"
	// ClaimDelete deletes the volume claim.
	ClaimDelete ClaimRetention = "Delete"
)

// StorageRetentionPolicy maps to the StatefulSet's persistentVolumeClaimRetentionPolicy.
type StorageRetentionPolicy struct {
	// whenDeleted applies when the KairoCluster is deleted.
	// +optional
	// +kubebuilder:default=Retain
	WhenDeleted ClaimRetention `json:"whenDeleted,omitempty"`

	// whenScaled applies to brokers removed by a scale down.
	// +optional
	// +kubebuilder:default=Retain
	WhenScaled ClaimRetention `json:"whenScaled,omitempty"`
}

// PodTemplateOverrides are the parts of the broker pod a user may set.
type PodTemplateOverrides struct {
	// labels added to every broker pod.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations added to every broker pod.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// affinity of the broker pods. When empty the operator prefers spreading
	// brokers over nodes.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// tolerations of the broker pods.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// nodeSelector of the broker pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// topologySpreadConstraints of the broker pods.
	// +optional
	// +listType=atomic
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// securityContext of the broker pods. The operator's default runs as a
	// non-root user.
	// +optional
	SecurityContext *corev1.PodSecurityContext `json:"securityContext,omitempty"`

	// priorityClassName of the broker pods.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// terminationGracePeriodSeconds gives a broker time for a clean shutdown.
	// +optional
	// +kubebuilder:validation:Minimum=10
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// env adds environment variables to the broker container.
	// +optional
	// +listType=atomic
	Env []corev1.EnvVar `json:"env,omitempty"`
}

// RackSpec configures rack awareness.
type RackSpec struct {
	// topologyKey is the node label whose value is the broker's rack, for
	// example "topology.kubernetes.io/zone".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	TopologyKey string `json:"topologyKey"`
}

// ServiceSpec configures the client Service.
type ServiceSpec struct {
	// type of the client Service.
	// +optional
	// +kubebuilder:default=ClusterIP
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	Type corev1.ServiceType `json:"type,omitempty"`

	// port of the client Service.
	// +optional
	// +kubebuilder:default=8080
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// kafkaPort of the client Service, to the brokers' Kafka listener:
	// Kafka clients bootstrap there (status.kafkaBootstrap), then reach
	// each broker at its pod's name in the headless Service on port 9092.
	// +optional
	// +kubebuilder:default=9092
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	KafkaPort int32 `json:"kafkaPort,omitempty"`

	// kafkaGatewayPort of the client Service, to the brokers' Kafka
	// gateway: the one broker address a gateway names is
	// localhost:kafkaGatewayPort, so that after
	// kubectl port-forward svc/<cluster> <kafkaGatewayPort> a Kafka client
	// given localhost:<kafkaGatewayPort> reaches every partition and group.
	// +optional
	// +kubebuilder:default=9095
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	KafkaGatewayPort int32 `json:"kafkaGatewayPort,omitempty"`

	// annotations added to the client Service.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PodDisruptionBudgetSpec configures the brokers' PodDisruptionBudget.
type PodDisruptionBudgetSpec struct {
	// enabled creates the PodDisruptionBudget.
	// +optional
	// +kubebuilder:default=true
	Enabled *bool `json:"enabled,omitempty"`

	// maxUnavailable brokers during voluntary disruptions.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == string ? self.matches('^[0-9]+%$') : self >= 0",message="maxUnavailable is a non-negative number or a percentage"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// MetricsSpec configures broker metrics.
type MetricsSpec struct {
	// enabled adds Prometheus scrape annotations to the broker pods.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
}

// BrokerStatus is what the operator observed of one broker.
type BrokerStatus struct {
	// id of the broker (the pod ordinal).
	ID int32 `json:"id"`

	// pod running the broker.
	Pod string `json:"pod"`

	// ready is the pod's readiness.
	Ready bool `json:"ready"`

	// state of the broker in the cluster metadata: alive, fenced, draining or drained.
	// +optional
	State string `json:"state,omitempty"`

	// partitions is the number of partition replicas the broker holds.
	// +optional
	Partitions int32 `json:"partitions,omitempty"`

	// leaders is the number of partitions the broker leads.
	// +optional
	Leaders int32 `json:"leaders,omitempty"`

	// underReplicated is the number of partitions the broker leads whose
	// in-sync replica set is smaller than their replica set.
	// +optional
	UnderReplicated int32 `json:"underReplicated,omitempty"`
}

// KairoClusterStatus is what the operator observed of the cluster.
type KairoClusterStatus struct {
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// replicas is the number of broker pods.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// readyReplicas is the number of ready broker pods.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// selector of the broker pods, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`

	// controllerId is the broker that leads the metadata quorum.
	// +optional
	ControllerID *int32 `json:"controllerId,omitempty"`

	// brokers observed through the broker admin API.
	// +optional
	// +listType=map
	// +listMapKey=id
	Brokers []BrokerStatus `json:"brokers,omitempty"`

	// security is what the operator observed of the cluster's certificates.
	// +optional
	Security *SecurityStatus `json:"security,omitempty"`

	// clientEndpoint is the in-cluster address clients use, host:port of the client Service.
	// +optional
	ClientEndpoint string `json:"clientEndpoint,omitempty"`

	// kafkaBootstrap is the in-cluster bootstrap address of Kafka clients,
	// host:port of the client Service's Kafka port.
	// +optional
	KafkaBootstrap string `json:"kafkaBootstrap,omitempty"`

	// conditions: Ready, Progressing and Degraded.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// KairoCluster is a replicated KairoLog cluster: a StatefulSet of brokers
// with persistent volumes, its Services, configuration and disruption budget.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=kc,categories=kairolog
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready Brokers",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Controller",type=integer,JSONPath=`.status.controllerId`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KairoCluster struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the cluster.
	// +required
	Spec KairoClusterSpec `json:"spec"`

	// status is the observed state of the cluster.
	// +optional
	Status KairoClusterStatus `json:"status,omitempty"`
}

// KairoClusterList contains a list of KairoCluster.
// +kubebuilder:object:root=true
type KairoClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KairoCluster `json:"items"`
}

func init() {
	register(&KairoCluster{}, &KairoClusterList{})
}
