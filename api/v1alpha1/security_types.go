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
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SecuritySpec is how a cluster protects itself: its CA, TLS and
// authentication per client listener, authorization, and the
// NetworkPolicy. Between brokers (the peer listener and the raft
// transport) TLS is always mutual, with certificates of the cluster CA.
// +kubebuilder:validation:XValidation:rule="!has(self.authorization) || !has(self.authorization.enabled) || !self.authorization.enabled || (has(self.listeners) && has(self.listeners.http) && has(self.listeners.http.tls) && self.listeners.http.tls)",message="authorization needs tls: true on the HTTP listener: the operator authenticates there with its certificate"
type SecuritySpec struct {
	// ca is the cluster CA that signs the brokers', the operator's and the
	// KairoUsers' certificates. By default the operator creates and renews
	// one.
	// +optional
	CA *CertificateAuthoritySpec `json:"ca,omitempty"`

	// listeners sets TLS and authentication per client listener. Every
	// listener is plain and open by default.
	// +optional
	Listeners ListenersSecurity `json:"listeners,omitempty"`

	// authorization checks every request against the KairoUsers' ACLs.
	// +optional
	Authorization *AuthorizationSpec `json:"authorization,omitempty"`

	// superUsers may do everything whatever the ACLs say: KairoUser names
	// (the principal of a SCRAM user or of a client certificate's common
	// name). The operator is always a superuser, by its own certificate.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=253
	SuperUsers []string `json:"superUsers,omitempty"`

	// networkPolicy: Enabled (the default) makes the operator write a
	// NetworkPolicy that admits the peer and raft ports only from the
	// cluster's brokers and the operator; Disabled writes none (and deletes
	// the operator's), for clusters whose network has no NetworkPolicy support.
	// +optional
	// +kubebuilder:default=Enabled
	// +kubebuilder:validation:Enum=Enabled;Disabled
	NetworkPolicy string `json:"networkPolicy,omitempty"`

	// networkPolicyPeers narrows who may reach the client ports (HTTP,
	// Kafka, gateway), in the NetworkPolicy "from" syntax. Empty admits
	// everyone.
	// +optional
	// +listType=atomic
	NetworkPolicyPeers []networkingv1.NetworkPolicyPeer `json:"networkPolicyPeers,omitempty"`
}

// Values of SecuritySpec.NetworkPolicy.
const (
	NetworkPolicyEnabled  = "Enabled"
	NetworkPolicyDisabled = "Disabled"
)

// CertificateAuthoritySpec configures the cluster CA.
// +kubebuilder:validation:XValidation:rule="!has(self.validity) || !has(self.renewBefore) || duration(self.renewBefore) < duration(self.validity)",message="renewBefore must be shorter than validity"
// +kubebuilder:validation:XValidation:rule="!has(self.issuerRef) || !has(self.secretName) || size(self.secretName) == 0",message="issuerRef and secretName are mutually exclusive: certificates come from a cert-manager issuer or from a CA Secret, not both"
type CertificateAuthoritySpec struct {
	// secretName names a Secret in the cluster's namespace holding a CA the
	// user brings: tls.crt and tls.key (a kubernetes.io/tls Secret), or
	// ca.crt and ca.key. The operator issues certificates from it and never
	// renews or changes it; replacing its content is a CA renewal (both CAs
	// are trusted until every certificate is reissued). Empty, with no
	// issuerRef: the operator creates and renews its own CA.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName,omitempty"`

	// issuerRef names a cert-manager Issuer (in the cluster's namespace) or
	// ClusterIssuer that issues the brokers', the operator's and the tls
	// KairoUsers' certificates instead of the operator: the operator
	// creates cert-manager Certificates, the brokers mount the Secrets
	// cert-manager writes and trust the CA it puts in their ca.crt, and
	// cert-manager renews them (validity and renewBefore become the
	// Certificates' duration and renewBefore). Needs cert-manager installed.
	// +optional
	IssuerRef *IssuerReference `json:"issuerRef,omitempty"`

	// validity of the operator's CA and of every certificate it issues,
	// such as "8760h" (365 days, the default).
	// +optional
	Validity *metav1.Duration `json:"validity,omitempty"`

	// renewBefore is how long before expiry a CA or a certificate is
	// renewed, such as "720h" (30 days, the default).
	// +optional
	RenewBefore *metav1.Duration `json:"renewBefore,omitempty"`
}

// IssuerReference names a cert-manager issuer, as a cert-manager
// Certificate's issuerRef does.
type IssuerReference struct {
	// name of the Issuer or ClusterIssuer.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// kind is Issuer (the default, in the cluster's namespace) or
	// ClusterIssuer, or the kind of an external issuer.
	// +optional
	// +kubebuilder:default=Issuer
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind,omitempty"`

	// group is the issuer's API group: cert-manager.io (the default) or an
	// external issuer's.
	// +optional
	// +kubebuilder:default=cert-manager.io
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group,omitempty"`
}

// ListenersSecurity sets TLS and authentication on each client listener.
type ListenersSecurity struct {
	// http is the HTTP API listener (port 8080). Authentication there is
	// HTTP Basic against the SCRAM credentials (scram-sha-512) or a client
	// certificate (tls), and either needs TLS.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.authentication) || self.authentication == 'none' || (has(self.tls) && self.tls)",message="authentication on the HTTP listener needs tls: true (Basic authentication sends the password)"
	HTTP *ListenerSecurity `json:"http,omitempty"`

	// kafka is the Kafka protocol listener (port 9092). SCRAM works
	// without TLS; tls authentication needs it.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.authentication) || self.authentication != 'tls' || (has(self.tls) && self.tls)",message="tls authentication needs tls: true"
	Kafka *ListenerSecurity `json:"kafka,omitempty"`

	// gateway is the Kafka gateway listener (port 9095).
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.authentication) || self.authentication != 'tls' || (has(self.tls) && self.tls)",message="tls authentication needs tls: true"
	Gateway *ListenerSecurity `json:"gateway,omitempty"`
}

// ListenerSecurity is one listener's TLS and authentication.
type ListenerSecurity struct {
	// tls serves the listener over TLS with the broker's certificate.
	// +optional
	TLS bool `json:"tls,omitempty"`

	// authentication: none (the default), scram-sha-512 or tls (a client
	// certificate of the cluster CA).
	// +optional
	// +kubebuilder:default=none
	Authentication AuthenticationType `json:"authentication,omitempty"`
}

// AuthenticationType is how clients of a listener prove who they are.
// +kubebuilder:validation:Enum=none;scram-sha-512;tls
type AuthenticationType string

const (
	AuthenticationNone  AuthenticationType = "none"
	AuthenticationSCRAM AuthenticationType = "scram-sha-512"
	AuthenticationTLS   AuthenticationType = "tls"
)

// AuthorizationSpec turns ACL checks on.
type AuthorizationSpec struct {
	// enabled checks every request on every listener against the ACLs of
	// the KairoUsers; a request no ACL allows is refused (HTTP 403, Kafka's
	// authorization error codes). Anonymous requests (on a listener
	// without authentication) are refused too.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
}

// SecurityStatus is what the operator observed of the cluster's
// certificates.
type SecurityStatus struct {
	// caSecret is the Secret holding the CA certificates clients trust
	// (key ca.crt): while the CA's key is replaced, both the old and the
	// new CA.
	// +optional
	CASecret string `json:"caSecret,omitempty"`

	// caNotAfter is when the signing CA expires.
	// +optional
	CANotAfter *metav1.Time `json:"caNotAfter,omitempty"`

	// certificatesNotAfter is when the brokers' certificates expire.
	// +optional
	CertificatesNotAfter *metav1.Time `json:"certificatesNotAfter,omitempty"`

	// peerTLS is the mutual TLS between brokers that the brokers run:
	// required, or permissive while a cluster created without it moves over.
	// +optional
	PeerTLS string `json:"peerTLS,omitempty"`
}
