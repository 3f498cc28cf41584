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
	"strings"

	corev1 "k8s.io/api/core/v1"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// HTTPTLSAnnotation on the pod template is "true" when the brokers serve
// the HTTP API over TLS. A pod's copy tells the operator which scheme that
// broker speaks while a change of spec.security.listeners.http.tls rolls
// through the cluster.
const HTTPTLSAnnotation = "kairolog.io/http-tls"

// HTTPTLS reports whether the cluster's HTTP listener serves TLS.
func HTTPTLS(c *kairov1alpha1.KairoCluster) bool {
	l := httpListener(c)
	return l != nil && l.TLS
}

// HTTPAuthentication is how the cluster's HTTP clients authenticate.
func HTTPAuthentication(c *kairov1alpha1.KairoCluster) kairov1alpha1.AuthenticationType {
	if l := httpListener(c); l != nil && l.Authentication != "" {
		return l.Authentication
	}
	return kairov1alpha1.AuthenticationNone
}

// AuthorizationEnabled reports whether the brokers check ACLs.
func AuthorizationEnabled(c *kairov1alpha1.KairoCluster) bool {
	s := c.Spec.Security
	return s != nil && s.Authorization != nil && s.Authorization.Enabled
}

func httpListener(c *kairov1alpha1.KairoCluster) *kairov1alpha1.ListenerSecurity {
	if s := c.Spec.Security; s != nil {
		return s.Listeners.HTTP
	}
	return nil
}

// clientSecurityArgs are the broker flags of the client listeners' TLS,
// authentication and authorization, from spec.security. TLS uses the
// broker certificate the pod mounts (the --tls-* flags), so without
// certificates there is none. The operator is a superuser by its
// certificate (the brokers recognise its role), whatever superUsers says.
func (b *Builder) clientSecurityArgs() []string {
	if b.Certificates == "" {
		return nil
	}
	c := b.Cluster
	var args []string
	if HTTPTLS(c) {
		args = append(args, "--http-tls")
		if authn := HTTPAuthentication(c); authn != kairov1alpha1.AuthenticationNone {
			args = append(args, "--http-authentication="+string(authn))
		}
	}
	if s := c.Spec.Security; s != nil {
		args = append(args, listenerArgs("--kafka", s.Listeners.Kafka)...)
		args = append(args, listenerArgs("--kafka-gateway", s.Listeners.Gateway)...)
	}
	if AuthorizationEnabled(c) {
		args = append(args, "--authorization")
	}
	if s := c.Spec.Security; s != nil && len(s.SuperUsers) > 0 {
		args = append(args, "--super-users="+strings.Join(s.SuperUsers, ","))
	}
	return args
}

// listenerArgs are a Kafka listener's <prefix>-tls and
// <prefix>-authentication flags. SCRAM works without TLS there (Kafka's
// SASL_PLAINTEXT); the brokers offer PLAIN only over TLS.
func listenerArgs(prefix string, l *kairov1alpha1.ListenerSecurity) []string {
	if l == nil {
		return nil
	}
	var args []string
	if l.TLS {
		args = append(args, prefix+"-tls")
	}
	if l.Authentication != "" && l.Authentication != kairov1alpha1.AuthenticationNone {
		args = append(args, prefix+"-authentication="+string(l.Authentication))
	}
	return args
}

// httpScheme is the scheme of the probes and of the metrics scrape.
func (b *Builder) httpScheme() corev1.URIScheme {
	if b.Certificates != "" && HTTPTLS(b.Cluster) {
		return corev1.URISchemeHTTPS
	}
	return corev1.URISchemeHTTP
}
