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
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	"github.com/kairolog/kairolog/controllers/resources"
	"github.com/kairolog/kairolog/internal/pki"
)

// issuedCertificates is the certificates phase of a cluster whose
// certificates a cert-manager issuer signs (spec.security.ca.issuerRef).
// The operator asks for one Certificate per broker (the pod's names, as
// its own broker certificates carry) and one for itself; cert-manager
// issues and renews them into Secrets the brokers mount as they are. The
// operator keeps only the trust bundle (<cluster>-ca-cert): the CAs of the
// Secrets' ca.crt, and a CA they no longer name until every broker has
// restarted without needing it.
//
// A renewed certificate reaches the brokers as the operator's own renewals
// do: the pod template's CertificatesAnnotation ends in a hash of the
// broker certificates, so a new one restarts the brokers one at a time,
// ISR-gated. Until every Secret holds a certificate, the pass stops
// before the StatefulSet: a pod would not start without them.
func (r *KairoClusterReconciler) issuedCertificates(ctx context.Context, st *reconcileState) (bool, error) {
	c := st.cluster
	now := r.now()
	ref := c.Spec.Security.CA.IssuerRef
	validity, renewBefore := caDurations(c)
	pods, sts, err := r.brokerPodsAndSet(ctx, c)
	if err != nil {
		return false, err
	}
	replicas := c.Spec.Replicas
	if sts != nil {
		replicas = max(replicas, ptr.Deref(sts.Spec.Replicas, 0))
	}

	wanted := make([]issuedCertificate, 0, replicas+1)
	for id := range replicas {
		wanted = append(wanted, issuedCertificate{name: resources.BrokerTLSSecretName(c, id), commonName: resources.PodName(c, id),
			org: pki.OrgBroker, dnsNames: resources.BrokerDNSNames(c, id), server: true, labels: resources.Labels(c)})
	}
	wanted = append(wanted, issuedCertificate{name: resources.OperatorCertSecretName(c), commonName: pki.OperatorName,
		org: pki.OrgOperator, labels: resources.Labels(c)})
	var pending []string
	issued := make([]*issuedKeyPair, 0, len(wanted))
	for _, ic := range wanted {
		err := applyCertificate(ctx, r.Client, r.Scheme, c, certificateSpec(ref, ic, validity, renewBefore), ic.name)
		if meta.IsNoMatchError(err) {
			st.degrade(ReasonCAUnusable, "spec.security.ca.issuerRef needs cert-manager, and its Certificate kind is not installed")
			return false, nil
		}
		if errors.Is(err, errNotOwned) {
			st.notOwned = append(st.notOwned, err.Error())
			st.degrade(ReasonResourceNotOwned, err.Error()+"; the operator leaves it alone. Delete or rename it to let the operator proceed")
			return false, nil
		}
		if err != nil {
			return false, err
		}
		kp, why, err := readIssuedSecret(ctx, r.Client, c.Namespace, ic.name, now)
		if err != nil {
			return false, err
		}
		if why != "" {
			pending = append(pending, why)
			continue
		}
		if err := adoptIssuedSecret(ctx, r.Client, r.Scheme, c, kp.secret); err != nil {
			return false, err
		}
		issued = append(issued, kp)
	}
	if len(pending) > 0 {
		st.progress(ReasonWaitingForIssuer, fmt.Sprintf("Waiting for %s %s: %s", issuerKind(ref), ref.Name, strings.Join(pending, "; ")))
		return false, nil
	}
	brokers := issued[:replicas]

	// The trust bundle: every CA the Secrets name; a CA they no longer
	// name stays until every broker runs without needing it.
	trustSecret := &corev1.Secret{}
	if err := r.getOwned(ctx, c, resources.CACertSecretName(c), trustSecret); err != nil {
		return false, err
	}
	oldTrust := parseBundle(trustSecret.Data[resources.CACertKey])
	var named []*x509.Certificate
	for _, kp := range issued {
		named = addCAs(named, kp.cas...)
	}
	trust := named
	for _, ca := range oldTrust {
		if now.Before(ca.NotAfter) {
			trust = addCAs(trust, ca)
		}
	}
	leaves := leafHash(brokers)
	if len(trust) > len(named) && trustHash(trust) == trustHash(oldTrust) &&
		podsRun(pods, replicas, trustHash(oldTrust)+"-"+leaves) {
		trust = named
	}
	if err := r.writeSecret(ctx, st, resources.CACertSecretName(c), corev1.SecretTypeOpaque, nil,
		map[string][]byte{resources.CACertKey: pki.EncodeCertificates(trust...)}); err != nil {
		return false, err
	}

	version := trustHash(trust) + "-" + leaves
	if sts != nil {
		if old := sts.Spec.Template.Annotations[resources.CertificatesAnnotation]; old != "" && !strings.HasSuffix(old, "-"+leaves) {
			r.event(c, trustSecret, corev1.EventTypeNormal, ReasonCertificatesRenewed, "Issue",
				"%s %s issued new broker certificates; the brokers restart one at a time to use them", issuerKind(ref), ref.Name)
		}
	}
	notAfter := brokers[0].cert.NotAfter
	for _, kp := range brokers {
		notAfter = minTime(notAfter, kp.cert.NotAfter)
	}
	// cert-manager renews on its own and the Secrets' watch wakes the
	// operator; the certificates' expiry and an old CA's are backstops.
	due := notAfter
	for _, ca := range trust[len(named):] {
		due = minTime(due, ca.NotAfter)
	}
	issuing := signerOf(brokers[0].cert, trust)
	if issuing == nil {
		issuing = trust[0]
	}
	st.certs = &certificates{version: version, peerTLS: peerTLSMode(sts, pods, replicas),
		issuing: issuing, notAfter: notAfter, due: due}
	return true, nil
}

// leafHash names the broker certificates, so that a pod template changes
// when cert-manager issues a new one.
func leafHash(brokers []*issuedKeyPair) string {
	h := sha256.New()
	for _, kp := range brokers {
		h.Write(kp.cert.Raw)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// caNotAfter is when the CA of the cluster's certificates expires: the
// operator's signing CA, or the one a cert-manager issuer signed the broker
// certificates with.
func (c *certificates) caNotAfter() time.Time {
	if c.signing != nil {
		return c.signing.Cert.NotAfter
	}
	return c.issuing.NotAfter
}
