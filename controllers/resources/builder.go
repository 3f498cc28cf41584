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
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// DefaultBrokerImage is the broker image when neither the cluster nor the
// manager names one.
const DefaultBrokerImage = "kairolog/broker:dev"

// Builder builds the children of one KairoCluster from its spec and the
// operator's decisions.
type Builder struct {
	// Cluster is the KairoCluster whose children are built.
	Cluster *kairov1alpha1.KairoCluster
	// Scheme resolves the cluster's kind for owner references.
	Scheme *runtime.Scheme
	// DefaultImage is the broker image when spec.image is empty.
	DefaultImage string
	// Replicas is how many brokers the StatefulSet runs now. It differs from
	// spec.replicas while a scale down drains the departing brokers.
	Replicas int32
	// Voters is how many of the first brokers were the initial voters of the
	// metadata quorum, fixed when the cluster was created.
	Voters int32
	// DefaultReplication is the default replication factor of the broker
	// configuration, fixed when the cluster was created.
	DefaultReplication int32
	// Certificates is the CertificatesAnnotation value of the pod
	// template: the trust bundle and broker certificates the brokers
	// mount. Empty: the brokers get no certificates and no TLS.
	Certificates string
	// PeerTLS is the brokers' --peer-tls mode when they have certificates:
	// required, or permissive while a cluster moves over.
	PeerTLS string
}

// ResourceBuilder builds one child.
type ResourceBuilder interface {
	// Build returns the skeleton of a new child: its name and namespace and
	// the fields that cannot change after creation.
	Build() (client.Object, error)
	// Update sets every field the operator owns, plus the owner reference,
	// on a new or an existing child.
	Update(obj client.Object) error
}

// ResourceBuilders are the cluster's children in the order they are
// applied: the ConfigMap, the peer Secret and the Services before the
// StatefulSet, so that a broker pod finds its configuration and the
// cluster secret to mount and its peers' DNS names when it starts; the
// disruption budget and the NetworkPolicy last. A disabled budget or
// NetworkPolicy is not listed. The certificates' Secrets are written
// before any of these, by the certificates phase.
func (b *Builder) ResourceBuilders() []ResourceBuilder {
	out := []ResourceBuilder{
		&ConfigMapBuilder{b},
		&PeerSecretBuilder{b},
		&HeadlessServiceBuilder{b},
		&ClientServiceBuilder{b},
		&StatefulSetBuilder{b},
	}
	if PodDisruptionBudgetEnabled(b.Cluster) {
		out = append(out, &PodDisruptionBudgetBuilder{b})
	}
	if NetworkPolicyEnabled(b.Cluster) {
		out = append(out, &NetworkPolicyBuilder{b})
	}
	return out
}

// Image is the broker image the pods run.
func (b *Builder) Image() string {
	switch {
	case b.Cluster.Spec.Image != "":
		return b.Cluster.Spec.Image
	case b.DefaultImage != "":
		return b.DefaultImage
	}
	return DefaultBrokerImage
}

// own makes the cluster the controller of obj, so that deleting the
// cluster garbage-collects it and its changes reach the cluster's reconcile.
func (b *Builder) own(obj client.Object) error {
	return controllerutil.SetControllerReference(b.Cluster, obj, b.Scheme)
}

// mergeLabels sets the cluster's labels on obj, keeping labels others added.
func (b *Builder) mergeLabels(obj client.Object) {
	obj.SetLabels(merge(obj.GetLabels(), Labels(b.Cluster)))
}

// merge returns dst with every key of src set (src wins).
func merge(dst, src map[string]string) map[string]string {
	if dst == nil && len(src) > 0 {
		dst = make(map[string]string, len(src))
	}
	for k, v := range src {
		dst[k] = v
	}
	return dst
}
