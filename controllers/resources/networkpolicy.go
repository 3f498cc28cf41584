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

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// OperatorPodLabels select the operator's pods (the Helm chart's selector
// label) in any namespace: the NetworkPolicy always admits them on the
// client ports, where the operator calls the brokers' admin API.
var OperatorPodLabels = map[string]string{LabelName: "kairolog-operator"}

// NetworkPolicyEnabled reports whether the cluster gets a NetworkPolicy:
// unless spec.security.networkPolicy is Disabled.
func NetworkPolicyEnabled(c *kairov1alpha1.KairoCluster) bool {
	s := c.Spec.Security
	return s == nil || s.NetworkPolicy != kairov1alpha1.NetworkPolicyDisabled
}

// NetworkPolicyBuilder builds the brokers' NetworkPolicy: the ports between
// brokers (peer and raft) admit only the cluster's own brokers; the client
// ports (every other container port: HTTP, and the Kafka listeners) admit
// everyone, or only spec.security.networkPolicyPeers and the operator.
type NetworkPolicyBuilder struct{ *Builder }

// Build returns the NetworkPolicy named after the cluster.
func (b *NetworkPolicyBuilder) Build() (client.Object, error) {
	return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{
		Name: NetworkPolicyName(b.Cluster), Namespace: b.Cluster.Namespace}}, nil
}

// Update sets the pod selector and the ingress rules.
func (b *NetworkPolicyBuilder) Update(obj client.Object) error {
	np, ok := obj.(*networkingv1.NetworkPolicy)
	if !ok {
		return fmt.Errorf("resources: NetworkPolicyBuilder got %T", obj)
	}
	b.mergeLabels(np)
	brokers := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: SelectorLabels(b.Cluster)}}
	internal := []networkingv1.NetworkPolicyPort{policyPort(RaftPort), policyPort(PeerPort)}
	var clientPorts []networkingv1.NetworkPolicyPort
	for _, p := range b.container().Ports {
		if p.ContainerPort != RaftPort && p.ContainerPort != PeerPort {
			clientPorts = append(clientPorts, policyPort(p.ContainerPort))
		}
	}
	clientRule := networkingv1.NetworkPolicyIngressRule{Ports: clientPorts}
	if s := b.Cluster.Spec.Security; s != nil && len(s.NetworkPolicyPeers) > 0 {
		clientRule.From = append(append([]networkingv1.NetworkPolicyPeer{brokers}, s.NetworkPolicyPeers...),
			networkingv1.NetworkPolicyPeer{
				NamespaceSelector: &metav1.LabelSelector{},
				PodSelector:       &metav1.LabelSelector{MatchLabels: OperatorPodLabels},
			})
	}
	np.Spec = networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: SelectorLabels(b.Cluster)},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		Ingress: []networkingv1.NetworkPolicyIngressRule{
			{Ports: internal, From: []networkingv1.NetworkPolicyPeer{brokers}},
			clientRule,
		},
	}
	return b.own(np)
}

func policyPort(port int32) networkingv1.NetworkPolicyPort {
	tcp := corev1.ProtocolTCP
	p := intstr.FromInt32(port)
	return networkingv1.NetworkPolicyPort{Protocol: &tcp, Port: &p}
}
