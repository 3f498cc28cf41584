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

import (
	"net/http"
	"sync"
	"time"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/controllers/resources"
)

// BrokerClients hands the reconcilers a client for a cluster's brokers. It is
// the one seam between the operator and the brokers: in a cluster it reaches
// them through the client Service; tests and a manager running outside the
// cluster point it elsewhere with the kairolog.io/endpoint-override annotation.
//
// Any broker answers any admin request (reads come from its copy of the
// metadata, changes are forwarded to the controller), so one address — a
// Service that balances over the ready brokers — is all the operator needs.
// docs/operator.md describes the override.
type BrokerClients interface {
	For(cluster *kairov1alpha1.KairoCluster) (*client.Client, error)
}

// ServiceBrokerClients builds clients from the cluster's client Service DNS
// name, or from the endpoint-override annotation when it is set. Clients share
// one keep-alive transport.
type ServiceBrokerClients struct {
	// Timeout bounds every broker call; a reconcile never waits longer.
	Timeout time.Duration

	once sync.Once
	http *http.Client
}

// For returns a client for the cluster's brokers.
func (s *ServiceBrokerClients) For(cluster *kairov1alpha1.KairoCluster) (*client.Client, error) {
	s.once.Do(func() { s.http = &http.Client{Transport: client.NewTransport()} })
	timeout := s.Timeout
	if timeout == 0 {
		timeout = DefaultBrokerTimeout
	}
	return client.New(BrokerEndpoint(cluster),
		client.WithHTTPClient(s.http),
		client.WithTimeout(timeout),
		client.WithUserAgent("kairolog-operator"))
}

// BrokerEndpoint is where the operator reaches a cluster's brokers: the
// override annotation, else http://<client Service>.<namespace>.svc:<port>.
func BrokerEndpoint(cluster *kairov1alpha1.KairoCluster) string {
	if override := cluster.Annotations[kairov1alpha1.EndpointOverrideAnnotation]; override != "" {
		return override
	}
	return "http://" + resources.ClientEndpoint(cluster)
}

// ClientServiceName is the client Service of a cluster: the cluster's name.
func ClientServiceName(cluster *kairov1alpha1.KairoCluster) string {
	return resources.ClientServiceName(cluster)
}
