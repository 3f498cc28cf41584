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
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

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
// name, or from the endpoint-override annotation when it is set. Plain
// clients share one keep-alive transport; a cluster whose HTTP listener
// serves TLS gets its own, which trusts the cluster CA and presents the
// operator's certificate (a superuser on every broker, so authorization
// never locks the operator out).
type ServiceBrokerClients struct {
	// Timeout bounds every broker call; a reconcile never waits longer.
	Timeout time.Duration
	// Reader reads the operator's certificate Secret and the broker pods
	// (the manager's cache). Nil: plain HTTP only.
	Reader ctrlclient.Reader

	once sync.Once
	http *http.Client

	mu  sync.Mutex
	tls map[types.NamespacedName]*tlsBrokerClient
}

// tlsBrokerClient is the HTTPS client of one cluster.
type tlsBrokerClient struct {
	// material is a digest of the certificate Secret it was built from.
	material [sha256.Size]byte
	http     *http.Client
	// plainFallback lets a connection fall back to plain HTTP when the
	// broker answers a TLS handshake without TLS: only while a change of
	// the listener's TLS rolls through the cluster (some pods run a
	// template with TLS, some without).
	plainFallback atomic.Bool
}

// For returns a client for the cluster's brokers.
func (s *ServiceBrokerClients) For(cluster *kairov1alpha1.KairoCluster) (*client.Client, error) {
	s.once.Do(func() { s.http = &http.Client{Transport: client.NewTransport()} })
	timeout := s.Timeout
	if timeout == 0 {
		timeout = DefaultBrokerTimeout
	}
	endpoint, h := BrokerEndpoint(cluster), s.http
	if s.Reader != nil {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		tlsOn, mixed, err := s.httpTLS(ctx, cluster)
		if err != nil {
			return nil, err
		}
		if tlsOn {
			tc, err := s.tlsClient(ctx, cluster)
			if err != nil {
				return nil, err
			}
			tc.plainFallback.Store(mixed)
			endpoint, h = "https://"+strings.TrimPrefix(endpoint, "http://"), tc.http
		}
	}
	return client.New(endpoint,
		client.WithHTTPClient(h),
		client.WithTimeout(timeout),
		client.WithUserAgent("kairolog-operator"))
}

// httpTLS reports whether the operator speaks TLS to the cluster's HTTP
// listener: when the spec asks for it or any broker pod runs with it.
// mixed is a cluster whose pods do not all agree (a roll in progress, or
// brokers not created yet), where a broker may still answer without TLS.
func (s *ServiceBrokerClients) httpTLS(ctx context.Context, cluster *kairov1alpha1.KairoCluster) (tlsOn, mixed bool, err error) {
	var pods corev1.PodList
	if err := s.Reader.List(ctx, &pods, ctrlclient.InNamespace(cluster.Namespace),
		ctrlclient.MatchingLabels(resources.SelectorLabels(cluster))); err != nil {
		return false, false, fmt.Errorf("listing the broker pods of %s: %w", cluster.Name, err)
	}
	withTLS := 0
	for i := range pods.Items {
		if pods.Items[i].Annotations[resources.HTTPTLSAnnotation] == "true" {
			withTLS++
		}
	}
	tlsOn = resources.HTTPTLS(cluster) || withTLS > 0
	return tlsOn, withTLS < len(pods.Items) || len(pods.Items) == 0, nil
}

// tlsClient is the cluster's HTTPS client, rebuilt when the operator's
// certificate or the trust bundle in its Secret changes.
func (s *ServiceBrokerClients) tlsClient(ctx context.Context, cluster *kairov1alpha1.KairoCluster) (*tlsBrokerClient, error) {
	secret := &corev1.Secret{}
	key := types.NamespacedName{Namespace: cluster.Namespace, Name: resources.OperatorCertSecretName(cluster)}
	if err := s.Reader.Get(ctx, key, secret); err != nil {
		return nil, fmt.Errorf("the operator's certificate for %s: %w", cluster.Name, err)
	}
	h := sha256.New()
	for _, k := range []string{resources.TLSCertKey, resources.TLSKeyKey, resources.CACertKey} {
		h.Write(secret.Data[k])
		h.Write([]byte{0})
	}
	var material [sha256.Size]byte
	copy(material[:], h.Sum(nil))

	s.mu.Lock()
	defer s.mu.Unlock()
	if tc := s.tls[key]; tc != nil && tc.material == material {
		return tc, nil
	}
	conf, err := operatorTLSConfig(cluster, secret)
	if err != nil {
		return nil, err
	}
	tc := &tlsBrokerClient{material: material}
	t := client.NewTransport()
	dial := t.DialContext
	t.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return dialTLSOrPlain(ctx, dial, network, addr, conf, tc.plainFallback.Load())
	}
	tc.http = &http.Client{Transport: t}
	if old := s.tls[key]; old != nil {
		old.http.CloseIdleConnections()
	}
	if s.tls == nil {
		s.tls = map[types.NamespacedName]*tlsBrokerClient{}
	}
	s.tls[key] = tc
	return tc, nil
}

// operatorTLSConfig trusts the cluster's CA bundle, presents the
// operator's certificate, and checks the brokers' certificates for the
// client Service's name, which every broker certificate carries, whatever
// address (an override, a port-forward) the connection goes to.
func operatorTLSConfig(cluster *kairov1alpha1.KairoCluster, secret *corev1.Secret) (*tls.Config, error) {
	cert, err := tls.X509KeyPair(secret.Data[resources.TLSCertKey], secret.Data[resources.TLSKeyKey])
	if err != nil {
		return nil, fmt.Errorf("the operator's certificate for %s: %w", cluster.Name, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secret.Data[resources.CACertKey]) {
		return nil, fmt.Errorf("the operator's certificate Secret of %s has no CA bundle", cluster.Name)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		RootCAs:      roots,
		Certificates: []tls.Certificate{cert},
		ServerName:   fmt.Sprintf("%s.%s.svc", resources.ClientServiceName(cluster), cluster.Namespace),
	}, nil
}

// dialTLSOrPlain dials addr and shakes hands over TLS. With plainFallback,
// a broker that answers the handshake without TLS (still running a
// template without it) gets a plain connection instead, which the HTTP
// transport then speaks plain HTTP over.
func dialTLSOrPlain(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error),
	network, addr string, conf *tls.Config, plainFallback bool) (net.Conn, error) {
	raw, err := dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	conn := tls.Client(raw, conf)
	err = conn.HandshakeContext(ctx)
	if err == nil {
		return conn, nil
	}
	raw.Close()
	var notTLS tls.RecordHeaderError
	if plainFallback && (errors.As(err, &notTLS) || errors.Is(err, io.EOF)) {
		return dial(ctx, network, addr)
	}
	return nil, err
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
