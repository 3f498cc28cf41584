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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KairoUserSpec is a user of a KairoCluster: how it authenticates and what
// it may do. The user's name on the brokers is the resource's name.
type KairoUserSpec struct {
	// clusterRef names the KairoCluster the user belongs to. Immutable.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterRef is immutable"
	ClusterRef ClusterReference `json:"clusterRef"`

	// authentication is how the user proves who it is.
	// +required
	Authentication UserAuthentication `json:"authentication"`

	// authorization is what the user may do when the cluster has
	// authorization on.
	// +optional
	Authorization *UserAuthorization `json:"authorization,omitempty"`
}

// UserAuthentication is a user's credentials.
// +kubebuilder:validation:XValidation:rule="self.type == 'scram-sha-512' || !has(self.password)",message="password applies to scram-sha-512 only"
type UserAuthentication struct {
	// type: scram-sha-512 (a password, for Kafka SASL/SCRAM and HTTP Basic)
	// or tls (a client certificate issued by the cluster CA).
	// +required
	// +kubebuilder:validation:Enum=scram-sha-512;tls
	Type UserAuthenticationType `json:"type"`

	// password names a Secret key holding the user's password. Empty: the
	// operator generates one into the user's Secret.
	// +optional
	Password *PasswordSource `json:"password,omitempty"`
}

// UserAuthenticationType is a KairoUser's kind of credential.
type UserAuthenticationType string

const (
	UserAuthenticationSCRAM UserAuthenticationType = "scram-sha-512"
	UserAuthenticationTLS   UserAuthenticationType = "tls"
)

// PasswordSource points at a password the user supplies.
type PasswordSource struct {
	// valueFrom is the Secret key holding the password.
	// +required
	ValueFrom PasswordValueFrom `json:"valueFrom"`
}

// PasswordValueFrom selects a Secret key.
type PasswordValueFrom struct {
	// secretKeyRef is a key of a Secret in the user's namespace.
	// +required
	SecretKeyRef corev1.SecretKeySelector `json:"secretKeyRef"`
}

// UserAuthorization lists a user's ACL rules.
type UserAuthorization struct {
	// acls are the rules; a request is allowed when an allow rule matches
	// and no deny rule does.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	ACLs []ACLRule `json:"acls,omitempty"`
}

// ACLRule allows or denies operations on resources, as Kafka's ACLs do.
// +kubebuilder:validation:XValidation:rule="self.resource.type != 'group' || self.operations.all(o, o in ['Read', 'Describe', 'Delete', 'All'])",message="a group ACL takes Read, Describe, Delete or All"
// +kubebuilder:validation:XValidation:rule="self.resource.type != 'cluster' || self.operations.all(o, o in ['Create', 'Alter', 'Describe', 'DescribeConfigs', 'AlterConfigs', 'All'])",message="a cluster ACL takes Create, Alter, Describe, DescribeConfigs, AlterConfigs or All"
type ACLRule struct {
	// resource the rule applies to.
	// +required
	Resource ACLResource `json:"resource"`

	// operations the rule allows or denies.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=9
	Operations []ACLOperation `json:"operations"`

	// type: allow (the default) or deny. A deny wins over any allow.
	// +optional
	// +kubebuilder:default=allow
	// +kubebuilder:validation:Enum=allow;deny
	Type string `json:"type,omitempty"`

	// host the request comes from, or "*" (the default) for any.
	// +optional
	// +kubebuilder:default="*"
	// +kubebuilder:validation:MaxLength=253
	Host string `json:"host,omitempty"`
}

// ACLResource is what an ACL rule is about.
// +kubebuilder:validation:XValidation:rule="self.type == 'cluster' || (has(self.name) && size(self.name) > 0)",message="a topic or group ACL needs a name (\"*\" for all)"
// +kubebuilder:validation:XValidation:rule="self.type != 'cluster' || !has(self.patternType) || self.patternType == 'literal'",message="a cluster ACL has no pattern"
type ACLResource struct {
	// type: topic, group or cluster.
	// +required
	// +kubebuilder:validation:Enum=topic;group;cluster
	Type string `json:"type"`

	// name of the topic or group; "*" matches every one. Not used for cluster.
	// +optional
	// +kubebuilder:validation:MaxLength=249
	Name string `json:"name,omitempty"`

	// patternType: literal (the default; the name exactly, or "*") or
	// prefix (every name that starts with it).
	// +optional
	// +kubebuilder:default=literal
	// +kubebuilder:validation:Enum=literal;prefix
	PatternType string `json:"patternType,omitempty"`
}

// ACLOperation is one operation of an ACL rule.
// +kubebuilder:validation:Enum=Read;Write;Create;Delete;Alter;Describe;DescribeConfigs;AlterConfigs;All
type ACLOperation string

// UserLabel on a KairoUser's Secret names the user.
const UserLabel = "kairolog.io/user"

// KairoUserStatus is what the operator observed of the user.
type KairoUserStatus struct {
	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// username is the user's principal on the brokers.
	// +optional
	Username string `json:"username,omitempty"`

	// secret is the Secret holding the user's credentials.
	// +optional
	Secret string `json:"secret,omitempty"`

	// conditions: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// KairoUser is a user of a KairoCluster, authenticated with SCRAM-SHA-512
// or a client certificate, with the ACLs that say what it may do. The
// operator keeps its credentials in a Secret named after it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ku,categories=kairolog
// +kubebuilder:validation:XValidation:rule="!self.metadata.name.startsWith('kairolog-')",message="names starting with kairolog- are reserved for the operator and the brokers"
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterRef.name`
// +kubebuilder:printcolumn:name="Authentication",type=string,JSONPath=`.spec.authentication.type`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KairoUser struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the user's credentials and ACLs.
	// +required
	Spec KairoUserSpec `json:"spec"`

	// status is the observed state of the user.
	// +optional
	Status KairoUserStatus `json:"status,omitempty"`
}

// KairoUserList contains a list of KairoUser.
// +kubebuilder:object:root=true
type KairoUserList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KairoUser `json:"items"`
}

func init() {
	register(&KairoUser{}, &KairoUserList{})
}
