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

package resources

import (
	"fmt"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// Labels on every child and every broker pod.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	LabelManagedBy = "app.kubernetes.io/managed-by"

	// AppName is the value of app.kubernetes.io/name.
	AppName = "kairolog"
	// ComponentBroker is the value of app.kubernetes.io/component.
	ComponentBroker = "broker"
	// ManagedBy is the value of app.kubernetes.io/managed-by; the operator
	// caches only pods and claims carrying it.
	ManagedBy = "kairolog-operator"
)

// Annotations the operator writes.
const (
	// ConfigHashAnnotation on the pod template is a hash of the broker
	// configuration and of the rest of the template. A pod whose value
	// differs from the StatefulSet's runs an outdated template and is
	// restarted by the operator, one broker at a time.
	ConfigHashAnnotation = "kairolog.io/config-hash"
	// VotersAnnotation on the StatefulSet records how many brokers were
	// initial voters of the metadata quorum when the cluster was created, so
	// that scaling later does not change --initial-voters.
	VotersAnnotation = "kairolog.io/initial-voters"
	// DefaultReplicationAnnotation on the StatefulSet records the default
	// replication factor the broker configuration got when the cluster was
	// created (DefaultReplication), so that scaling later does not change
	// the configuration and restart every broker. Clusters created before
	// it existed used their voter count, which was the same number.
	DefaultReplicationAnnotation = "kairolog.io/default-replication"
	// CertificatesAnnotation on the pod template names the trust bundle and
	// the generation of the broker certificates the pods mount
	// ("<trust bundle hash>-<generation>"). It is part of the template, so a
	// change restarts the brokers one at a time, and a pod's copy tells
	// which CAs it trusts (certificates.go).
	CertificatesAnnotation = "kairolog.io/certificates"
	// PeerTLSAnnotation on the StatefulSet and the pod template is the
	// --peer-tls mode the brokers run: required, or permissive while a
	// cluster created without TLS between brokers moves over.
	PeerTLSAnnotation = "kairolog.io/peer-tls"
	// CertificateGenerationAnnotation on the broker certificates' Secret
	// counts their reissues; a reissue of all of them restarts the brokers.
	CertificateGenerationAnnotation = "kairolog.io/certificate-generation"
	// ForceRenewAnnotation set to "true" on the cluster CA's Secret
	// (<cluster>-ca) renews the CA certificate now, with the same key, as
	// Strimzi's strimzi.io/force-renew does; the operator removes it.
	ForceRenewAnnotation = "kairolog.io/force-renew"
)

// Container layout of a broker pod.
const (
	ContainerName = "broker"
	HTTPPortName  = "http"
	RaftPortName  = "raft"
	PeerPortName  = "peer"
	// KafkaPortName and KafkaGatewayPortName are the Kafka listener and
	// the Kafka gateway.
	KafkaPortName        = "kafka"
	KafkaGatewayPortName = "kafka-gateway"
	HTTPPort             = 8080
	KafkaPort            = 9092
	KafkaGatewayPort     = 9095
	RaftPort             = 9093
	// PeerPort is the broker's peer listener: calls from other brokers
	// only, each carrying the cluster secret.
	PeerPort       = 9094
	DataVolume     = "data"
	ConfigVolume   = "config"
	TmpVolume      = "tmp"
	DataMountPath  = "/var/lib/kairolog"
	DataDir        = DataMountPath + "/data"
	ConfigMountDir = "/etc/kairolog"
	ConfigFile     = ConfigMountDir + "/" + PropertiesKey
	// PropertiesKey is the ConfigMap key holding the broker's
	// Java-properties configuration.
	PropertiesKey = "broker.properties"
	// PeerSecretVolume mounts the cluster secret's Secret at
	// PeerSecretMountDir; the broker reads PeerSecretFile. The directory
	// is not inside ConfigMountDir: a mount point inside another volume's
	// read-only mount cannot be created.
	PeerSecretVolume   = "peer-secret"
	PeerSecretMountDir = "/etc/kairolog-peer"
	PeerSecretKey      = "secret"
	PeerSecretFile     = PeerSecretMountDir + "/" + PeerSecretKey
	// TLSVolume projects the broker certificates' Secret (every broker's
	// <pod>.crt and <pod>.key) and the CA bundle's ca.crt into
	// TLSMountDir; each broker reads its own by its pod name.
	TLSVolume   = "tls"
	TLSMountDir = "/etc/kairolog-tls"
	// CAKey and CACertKey hold a CA's key and certificate (in the CA
	// Secret), and the trusted CA bundle (in the CA certificate Secret,
	// the operator's certificate Secret and a KairoUser's Secret).
	CAKey     = "ca.key"
	CACertKey = "ca.crt"
	// TLSCertKey and TLSKeyKey hold a certificate and its key
	// (kubernetes.io/tls), as in the operator's certificate Secret.
	TLSCertKey = "tls.crt"
	TLSKeyKey  = "tls.key"
)

// DefaultTerminationGracePeriodSeconds covers a broker's clean shutdown:
// moving its leaderships (controlled.shutdown.timeout.ms, 30 s by default),
// draining HTTP, and closing its logs with a clean-shutdown marker.
const DefaultTerminationGracePeriodSeconds int64 = 60

// DefaultUserID is the non-root user and group brokers run as.
const DefaultUserID int64 = 65532

// MaxVoters is the most initial voters the operator gives a cluster.
const MaxVoters = 3

// StatefulSetName is the brokers' StatefulSet: the cluster's name.
func StatefulSetName(c *kairov1alpha1.KairoCluster) string { return c.Name }

// HeadlessServiceName gives brokers stable DNS names for peers.
func HeadlessServiceName(c *kairov1alpha1.KairoCluster) string { return c.Name + "-headless" }

// ClientServiceName is where clients reach any ready broker.
func ClientServiceName(c *kairov1alpha1.KairoCluster) string { return c.Name }

// PeerSecretName is the Secret holding the cluster secret of the brokers'
// peer listeners.
func PeerSecretName(c *kairov1alpha1.KairoCluster) string { return c.Name + "-peer-secret" }

// CASecretName holds the operator's CA for the cluster: its key and
// certificate. Only the operator reads it.
func CASecretName(c *kairov1alpha1.KairoCluster) string { return c.Name + "-ca" }

// CACertSecretName holds the CA bundle clients trust (ca.crt): the signing
// CA, and during a renewal the previous one. Anyone who talks to the
// cluster may read it.
func CACertSecretName(c *kairov1alpha1.KairoCluster) string { return c.Name + "-ca-cert" }

// BrokerCertsSecretName holds every broker's certificate and key.
func BrokerCertsSecretName(c *kairov1alpha1.KairoCluster) string { return c.Name + "-broker-certs" }

// OperatorCertSecretName holds the operator's client certificate for the
// cluster, a superuser on every listener: tls.crt, tls.key and ca.crt. With
// a cert-manager issuer (IssuedByCertManager) cert-manager writes it, under
// a name of its own so that a cluster moving between the two never has
// two writers of one Secret.
func OperatorCertSecretName(c *kairov1alpha1.KairoCluster) string {
	if IssuedByCertManager(c) {
		return c.Name + "-operator-tls"
	}
	return c.Name + "-operator-cert"
}

// IssuedByCertManager reports whether the cluster's certificates come from
// the cert-manager issuer of spec.security.ca.issuerRef.
func IssuedByCertManager(c *kairov1alpha1.KairoCluster) bool {
	s := c.Spec.Security
	return s != nil && s.CA != nil && s.CA.IssuerRef != nil
}

// BrokerTLSSecretName is the Secret cert-manager writes broker id's
// certificate into (tls.crt, tls.key, ca.crt) when IssuedByCertManager;
// its Certificate has the same name.
func BrokerTLSSecretName(c *kairov1alpha1.KairoCluster, id int32) string {
	return PodName(c, id) + "-tls"
}

// NetworkPolicyName is the NetworkPolicy of the cluster's brokers.
func NetworkPolicyName(c *kairov1alpha1.KairoCluster) string { return c.Name }

// BrokerCertKey and BrokerKeyKey are broker id's keys in the broker
// certificates' Secret.
func BrokerCertKey(c *kairov1alpha1.KairoCluster, id int32) string { return PodName(c, id) + ".crt" }
func BrokerKeyKey(c *kairov1alpha1.KairoCluster, id int32) string  { return PodName(c, id) + ".key" }

// BrokerDNSNames are the names a broker certificate carries: every name a
// client or peer reaches broker id by — the pod through the headless
// Service (short and fully qualified), the client Service, and localhost
// for kubectl port-forward.
func BrokerDNSNames(c *kairov1alpha1.KairoCluster, id int32) []string {
	pod, headless, svc, ns := PodName(c, id), HeadlessServiceName(c), ClientServiceName(c), c.Namespace
	return []string{
		fmt.Sprintf("%s.%s.%s.svc", pod, headless, ns),
		fmt.Sprintf("%s.%s.%s.svc.cluster.local", pod, headless, ns),
		fmt.Sprintf("%s.%s", pod, headless),
		fmt.Sprintf("%s.%s.svc", svc, ns),
		fmt.Sprintf("%s.%s.svc.cluster.local", svc, ns),
		fmt.Sprintf("%s.%s", svc, ns),
		svc,
		"localhost",
	}
}

// ConfigMapName holds the broker configuration.
func ConfigMapName(c *kairov1alpha1.KairoCluster) string { return c.Name + "-config" }

// PodDisruptionBudgetName limits voluntary disruptions of the brokers.
func PodDisruptionBudgetName(c *kairov1alpha1.KairoCluster) string { return c.Name }

// PodName is the pod of broker id.
func PodName(c *kairov1alpha1.KairoCluster, id int32) string {
	return fmt.Sprintf("%s-%d", StatefulSetName(c), id)
}

// ClaimName is broker id's volume claim, as the StatefulSet controller
// names it.
func ClaimName(c *kairov1alpha1.KairoCluster, id int32) string {
	return fmt.Sprintf("%s-%s", DataVolume, PodName(c, id))
}

// PeerHost is broker id's stable DNS name through the headless Service.
func PeerHost(c *kairov1alpha1.KairoCluster, id int32) string {
	return fmt.Sprintf("%s.%s.%s.svc", PodName(c, id), HeadlessServiceName(c), c.Namespace)
}

// ClientEndpoint is host:port of the client Service inside the cluster.
func ClientEndpoint(c *kairov1alpha1.KairoCluster) string {
	return fmt.Sprintf("%s.%s.svc:%d", ClientServiceName(c), c.Namespace, ServicePort(c))
}

// KafkaBootstrap is host:port of the client Service's Kafka port inside
// the cluster.
func KafkaBootstrap(c *kairov1alpha1.KairoCluster) string {
	return fmt.Sprintf("%s.%s.svc:%d", ClientServiceName(c), c.Namespace, KafkaServicePort(c))
}

// KafkaServicePort is the client Service's Kafka port.
func KafkaServicePort(c *kairov1alpha1.KairoCluster) int32 {
	if c.Spec.Service.KafkaPort != 0 {
		return c.Spec.Service.KafkaPort
	}
	return KafkaPort
}

// KafkaGatewayServicePort is the client Service's Kafka gateway port, and
// the localhost port a gateway advertises.
func KafkaGatewayServicePort(c *kairov1alpha1.KairoCluster) int32 {
	if c.Spec.Service.KafkaGatewayPort != 0 {
		return c.Spec.Service.KafkaGatewayPort
	}
	return KafkaGatewayPort
}

// ServicePort is the client Service's port.
func ServicePort(c *kairov1alpha1.KairoCluster) int32 {
	if c.Spec.Service.Port != 0 {
		return c.Spec.Service.Port
	}
	return HTTPPort
}

// SelectorLabels select a cluster's broker pods. They are part of the
// StatefulSet's immutable selector and never change.
func SelectorLabels(c *kairov1alpha1.KairoCluster) map[string]string {
	return map[string]string{
		LabelName:      AppName,
		LabelInstance:  c.Name,
		LabelComponent: ComponentBroker,
	}
}

// Labels are on every child of a cluster and on its pods.
func Labels(c *kairov1alpha1.KairoCluster) map[string]string {
	l := SelectorLabels(c)
	l[LabelManagedBy] = ManagedBy
	return l
}

// Voters is how many initial voters a new cluster of the given size gets:
// the first three brokers, or only the first when there are fewer than
// three. A quorum works on a majority, so two voters survive no more than
// one does (neither may lose a voter), and with two every restart of
// either broker would stop the quorum, while with one only a restart of
// broker 0 does. Kafka gives the same advice for KRaft quorums: an odd
// number of voters.
func Voters(replicas int32) int32 {
	if replicas >= MaxVoters {
		return MaxVoters
	}
	return 1
}

// DefaultReplication is the replication factor a new cluster of the given
// size gives new topics and __consumer_offsets: three, or every broker
// when there are fewer.
func DefaultReplication(replicas int32) int32 {
	return max(1, min(MaxVoters, replicas))
}
