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
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClientServiceBuilder builds the Service clients (and the operator) use:
// it balances over the ready brokers, and any broker serves any request.
type ClientServiceBuilder struct{ *Builder }

// Build returns the Service named after the cluster.
func (b *ClientServiceBuilder) Build() (client.Object, error) {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{
		Name: ClientServiceName(b.Cluster), Namespace: b.Cluster.Namespace}}, nil
}

// Update sets the type, ports, annotations and selector from spec.service:
// the HTTP API, the Kafka listener (a bootstrap address: Kafka clients then
// reach each broker through the headless Service) and the Kafka gateway.
func (b *ClientServiceBuilder) Update(obj client.Object) error {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return fmt.Errorf("resources: ClientServiceBuilder got %T", obj)
	}
	b.mergeLabels(svc)
	svc.SetAnnotations(merge(svc.GetAnnotations(), b.Cluster.Spec.Service.Annotations))
	svc.Spec.Type = b.Cluster.Spec.Service.Type
	if svc.Spec.Type == "" {
		svc.Spec.Type = corev1.ServiceTypeClusterIP
	}
	svc.Spec.Selector = SelectorLabels(b.Cluster)
	svc.Spec.Ports = []corev1.ServicePort{
		servicePort(svc, HTTPPortName, ServicePort(b.Cluster)),
		servicePort(svc, KafkaPortName, KafkaServicePort(b.Cluster)),
		servicePort(svc, KafkaGatewayPortName, KafkaGatewayServicePort(b.Cluster)),
	}
	if svc.Spec.Type == corev1.ServiceTypeClusterIP {
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
	}
	return b.own(svc)
}
