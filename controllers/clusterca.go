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
	"crypto/x509"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/controllers/resources"
	"github.com/kairolog/kairolog/internal/pki"
)

// clusterCA is a KairoCluster's certificate state as its Secrets hold it,
// for the issuers of client certificates.
type clusterCA struct {
	// signing issues new certificates.
	signing *pki.Authority
	// trust is the CA bundle the brokers trust.
	trust []*x509.Certificate
	// issuing is the CA the brokers' certificates come from: every broker
	// trusts it. During a CA renewal it is the old CA until the brokers
	// trust the new one.
	issuing *x509.Certificate
	// validity and renewBefore are spec.security.ca's.
	validity, renewBefore time.Duration
}

// errNoClusterCA is a cluster whose certificates the operator has not
// written yet.
var errNoClusterCA = fmt.Errorf("the cluster's CA and certificates are not written yet")

// loadClusterCA reads cluster c's CA state. cached reads the operator's
// labelled Secrets; direct reads a user-supplied CA Secret.
func loadClusterCA(ctx context.Context, cached, direct client.Reader, c *kairov1alpha1.KairoCluster) (*clusterCA, error) {
	out := &clusterCA{}
	out.validity, out.renewBefore = caDurations(c)
	read := func(r client.Reader, name string) (*corev1.Secret, error) {
		s := &corev1.Secret{}
		if err := r.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: name}, s); err != nil {
			return nil, err
		}
		return s, nil
	}
	var err error
	if sec := c.Spec.Security; sec != nil && sec.CA != nil && sec.CA.SecretName != "" {
		s, err := read(direct, sec.CA.SecretName)
		if err != nil {
			return nil, fmt.Errorf("CA Secret %s: %w", sec.CA.SecretName, err)
		}
		certPEM, keyPEM := s.Data[resources.TLSCertKey], s.Data[resources.TLSKeyKey]
		if len(certPEM) == 0 {
			certPEM, keyPEM = s.Data[resources.CACertKey], s.Data[resources.CAKey]
		}
		if out.signing, err = pki.ParseAuthority(certPEM, keyPEM); err != nil {
			return nil, fmt.Errorf("CA Secret %s: %w", sec.CA.SecretName, err)
		}
	} else {
		s, err := read(cached, resources.CASecretName(c))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errNoClusterCA, err)
		}
		if out.signing, err = pki.ParseAuthority(s.Data[resources.CACertKey], s.Data[resources.CAKey]); err != nil {
			return nil, fmt.Errorf("%w: %v", errNoClusterCA, err)
		}
	}
	trust, err := read(cached, resources.CACertSecretName(c))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoClusterCA, err)
	}
	if out.trust = parseBundle(trust.Data[resources.CACertKey]); len(out.trust) == 0 {
		return nil, fmt.Errorf("%w: an empty CA bundle", errNoClusterCA)
	}
	certs, err := read(cached, resources.BrokerCertsSecretName(c))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoClusterCA, err)
	}
	out.issuing = issuerOf(c, certs.Data, out.trust)
	return out, nil
}

// issue signs a client certificate for a principal of role org: from the
// signing CA once the brokers' certificates come from it (so the brokers
// trust it), else — during a CA renewal, before the brokers trust the new
// CA — only when keep has none that is still valid.
func (ca *clusterCA) issue(name, org string, keepCert, keepKey []byte, now time.Time) (certPEM, keyPEM []byte, err error) {
	cert := validLeaf(keepCert, keepKey, ca.trust, now, nil)
	switched := pki.Fingerprint(ca.issuing) == pki.Fingerprint(ca.signing.Cert)
	if cert != nil && cert.Subject.CommonName == name && pki.Role(cert) == org &&
		(!switched || ca.signing.Signed(cert) && now.Before(cert.NotAfter.Add(-ca.renewBefore))) {
		return keepCert, keepKey, nil
	}
	kp, err := ca.signing.Issue(pki.LeafSpec{CommonName: name, Organization: org, Client: true,
		NotAfter: now.Add(ca.validity)}, now)
	if err != nil {
		return nil, nil, err
	}
	return kp.CertPEM, kp.KeyPEM, nil
}
