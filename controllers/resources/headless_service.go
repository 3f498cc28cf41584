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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HeadlessServiceBuilder builds the Service that gives every broker a
// stable DNS name, <pod>.<cluster>-headless.<namespace>.svc, which brokers
// advertise and dial each other at: the metadata quorum's voters on the
// raft port, every broker on the peer port; Kafka clients reach each
// broker there on the Kafka port, as Kafka's Metadata names it.
type HeadlessServiceBuilder struct{ *Builder }

// Build returns a headless Service (clusterIP None cannot change later).
func (b *HeadlessServiceBuilder) Build() (client.Object, error) {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: HeadlessServiceName(b.Cluster), Namespace: b.Cluster.Namespace},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone},
	}, nil
}

// Update sets the selector and ports. Addresses of brokers that are not
// ready are published too: a broker joining the quorum must reach its peers
// before any of them is ready.
func (b *HeadlessServiceBuilder) Update(obj client.Object) error {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return fmt.Errorf("resources: HeadlessServiceBuilder got %T", obj)
	}
	b.mergeLabels(svc)
	svc.Spec.Selector = SelectorLabels(b.Cluster)
	svc.Spec.PublishNotReadyAddresses = true
	svc.Spec.Ports = []corev1.ServicePort{
		servicePort(svc, HTTPPortName, HTTPPort),
		servicePort(svc, RaftPortName, RaftPort),
		servicePort(svc, PeerPortName, PeerPort),
		servicePort(svc, KafkaPortName, KafkaPort),
	}
	return b.own(svc)
}

// servicePort is a named TCP port to the container port of the same name,
// keeping the node port Kubernetes allocated to it, if any.
func servicePort(svc *corev1.Service, name string, port int32) corev1.ServicePort {
	p := corev1.ServicePort{Name: name, Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromString(name)}
	if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		for _, old := range svc.Spec.Ports {
			if old.Name == name {
				p.NodePort = old.NodePort
			}
		}
	}
	return p
}
