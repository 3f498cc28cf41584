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
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/controllers/resources"
	"github.com/kairolog/kairolog/internal/pki"
)

// Defaults of spec.security.ca, as Strimzi's: a year of validity, renewal
// a month before expiry.
const (
	DefaultCAValidity    = 365 * 24 * time.Hour
	DefaultCARenewBefore = 30 * 24 * time.Hour
)

// certificates is what the certificates phase decided, for the builder and
// the status.
type certificates struct {
	// version is the pod template's CertificatesAnnotation.
	version string
	// peerTLS is the brokers' --peer-tls mode.
	peerTLS string
	// issuing is the CA the broker certificates are signed by now; the
	// KairoUser controller issues client certificates from it.
	issuing  *x509.Certificate
	signing  *pki.Authority
	notAfter time.Time
	// due is the next time a certificate must be renewed or a CA leaves
	// the trust bundle: the cluster is looked at again then.
	due time.Time
}

// reconcileCertificates keeps the cluster's CA and certificates, in the
// Secrets the brokers mount, so that a CA renewal never breaks a
// connection. It is a sequence of rolling restarts, each started by a
// change of the pod template's CertificatesAnnotation (the trust bundle's
// hash and the broker certificates' generation):
//
//  1. a new signing CA (the operator's, renewed renewBefore its expiry, or
//     new content in the user's Secret) joins the trust bundle next to the
//     old one; the brokers restart trusting both;
//  2. once every pod trusts the new CA, every broker certificate and the
//     operator's are reissued from it; the brokers restart with them (a
//     restarted broker presents a new certificate that the others already
//     trust, and trusts the old ones still presented);
//  3. once every pod runs the reissued certificates, the old CA leaves the
//     trust bundle; the brokers restart trusting only the new one.
//
// A certificate near its own expiry is reissued in step 2's way; a new
// broker (scale up) gets its certificate without restarting the others.
func (r *KairoClusterReconciler) reconcileCertificates(ctx context.Context, st *reconcileState) (bool, error) {
	cont, err := r.certificates(ctx, st)
	if errors.Is(err, errNotOwned) {
		st.notOwned = append(st.notOwned, err.Error())
		st.degrade(ReasonResourceNotOwned, err.Error()+"; the operator leaves it alone and creates nothing. Delete or rename it to let the operator proceed")
		return false, nil
	}
	return cont, err
}

// errNotOwned is a Secret of the cluster's names that is someone else's.
var errNotOwned = errors.New("exists and is not owned by the KairoCluster")

func (r *KairoClusterReconciler) certificates(ctx context.Context, st *reconcileState) (bool, error) {
	c := st.cluster
	if resources.IssuedByCertManager(c) {
		return r.issuedCertificates(ctx, st)
	}
	now := r.now()
	validity, renewBefore := caDurations(c)
	signing, err := r.signingCA(ctx, st, now, validity, renewBefore)
	if err != nil || signing == nil {
		return false, err
	}
	pods, sts, err := r.brokerPodsAndSet(ctx, c)
	if err != nil {
		return false, err
	}
	replicas := c.Spec.Replicas
	if sts != nil {
		replicas = max(replicas, ptr.Deref(sts.Spec.Replicas, 0))
	}

	trustSecret := &corev1.Secret{}
	if err := r.getOwned(ctx, c, resources.CACertSecretName(c), trustSecret); err != nil {
		return false, err
	}
	certSecret := &corev1.Secret{}
	if err := r.getOwned(ctx, c, resources.BrokerCertsSecretName(c), certSecret); err != nil {
		return false, err
	}
	oldTrust := parseBundle(trustSecret.Data[resources.CACertKey])
	generation, _ := strconv.Atoi(certSecret.Annotations[resources.CertificateGenerationAnnotation])

	// Step 1 and step 3: the trust bundle. A renewal that kept the key
	// needs neither: every CA the brokers trust already verifies what the
	// renewed one signs, and the other way round.
	trust := trustBundle(oldTrust, signing, now)
	current := trustHash(oldTrust) + "-" + strconv.Itoa(generation)
	sameKey := allSameKey(oldTrust, signing)
	if len(trust) > 1 && (sameKey || allSignedBy(c, certSecret, replicas, signing) && podsRun(pods, replicas, current)) {
		trust = []*x509.Certificate{signing.Cert}
	}
	if err := r.writeSecret(ctx, st, resources.CACertSecretName(c), corev1.SecretTypeOpaque, nil,
		map[string][]byte{resources.CACertKey: pki.EncodeCertificates(trust...)}); err != nil {
		return false, err
	}
	hash := trustHash(trust)

	// Step 2: the broker certificates, once every pod trusts the signing CA.
	switchCA := sts == nil || podsTrust(pods, hash) || sameKey
	data, reissued, notAfter, err := brokerCertificates(c, certSecret.Data, replicas, signing, trust, switchCA, now, validity, renewBefore)
	if err != nil {
		return false, err
	}
	if reissued {
		generation++
		r.event(c, certSecret, corev1.EventTypeNormal, ReasonCertificatesRenewed, "Issue",
			"Issued broker certificates from CA %q (expiring %s); the brokers restart one at a time to use them",
			signing.Cert.Subject.CommonName, notAfter.UTC().Format(time.RFC3339))
	}
	if err := r.writeSecret(ctx, st, resources.BrokerCertsSecretName(c), corev1.SecretTypeOpaque,
		map[string]string{resources.CertificateGenerationAnnotation: strconv.Itoa(generation)}, data); err != nil {
		return false, err
	}
	issuing := issuerOf(c, data, trust)
	ca := &clusterCA{signing: signing, trust: trust, issuing: issuing, validity: validity, renewBefore: renewBefore}
	if err := r.operatorCertificate(ctx, st, ca, now); err != nil {
		return false, err
	}
	due := signing.Cert.NotAfter.Add(-renewBefore)
	if !notAfter.IsZero() {
		due = minTime(due, notAfter.Add(-renewBefore))
	}
	for _, ca := range trust[1:] {
		due = minTime(due, ca.NotAfter)
	}
	st.certs = &certificates{version: hash + "-" + strconv.Itoa(generation), peerTLS: peerTLSMode(sts, pods, replicas),
		signing: signing, issuing: issuing, notAfter: notAfter, due: due}
	return true, nil
}

// now is the reconciler's clock.
func (r *KairoClusterReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// caDurations are spec.security.ca's validity and renewBefore, or the defaults.
func caDurations(c *kairov1alpha1.KairoCluster) (validity, renewBefore time.Duration) {
	validity, renewBefore = DefaultCAValidity, DefaultCARenewBefore
	if s := c.Spec.Security; s != nil && s.CA != nil {
		if s.CA.Validity != nil && s.CA.Validity.Duration > 0 {
			validity = s.CA.Validity.Duration
		}
		if s.CA.RenewBefore != nil && s.CA.RenewBefore.Duration > 0 {
			renewBefore = s.CA.RenewBefore.Duration
		}
	}
	if renewBefore >= validity {
		renewBefore = validity / 2
	}
	return validity, renewBefore
}

// signingCA is the CA that issues the cluster's certificates: the user's
// (spec.security.ca.secretName), or the operator's own, created on first
// use and renewed renewBefore its expiry or when its Secret carries
// ForceRenewAnnotation. A renewal keeps the key, as Strimzi's default
// renew-certificate policy does, so clients holding the old certificate
// keep verifying the brokers; a new key comes only with a new Secret
// (deleting <cluster>-ca replaces the key, trusting both CAs during the
// roll). A user CA that is missing or unusable stops the pass with a
// Degraded condition; nil then.
func (r *KairoClusterReconciler) signingCA(ctx context.Context, st *reconcileState, now time.Time,
	validity, renewBefore time.Duration) (*pki.Authority, error) {
	c := st.cluster
	if s := c.Spec.Security; s != nil && s.CA != nil && s.CA.SecretName != "" {
		ca, err := r.userCA(ctx, c, s.CA.SecretName)
		if err != nil {
			st.degrade(ReasonCAUnusable, err.Error())
			return nil, nil
		}
		return ca, nil
	}
	secret := &corev1.Secret{}
	if err := r.getOwned(ctx, c, resources.CASecretName(c), secret); err != nil {
		return nil, err
	}
	old, err := pki.ParseAuthority(secret.Data[resources.CACertKey], secret.Data[resources.CAKey])
	forced := secret.Annotations[resources.ForceRenewAnnotation] == "true"
	if err == nil && !forced && now.Before(old.Cert.NotAfter.Add(-renewBefore)) {
		return old, nil
	}
	what := "Created"
	var ca *pki.Authority
	if err == nil {
		what = "Renewed (same key)"
		ca, err = old.Renew(now, now.Add(validity))
	} else {
		ca, err = pki.NewAuthority(fmt.Sprintf("%s.%s cluster CA", c.Name, c.Namespace), now, now.Add(validity))
	}
	if err != nil {
		return nil, err
	}
	// The annotation asked for this renewal: it goes with it.
	if err := r.writeSecret(ctx, st, resources.CASecretName(c), corev1.SecretTypeOpaque,
		map[string]string{resources.ForceRenewAnnotation: ""},
		map[string][]byte{resources.CACertKey: ca.CertPEM, resources.CAKey: ca.KeyPEM}); err != nil {
		return nil, err
	}
	r.event(c, secret, corev1.EventTypeNormal, ReasonCARenewed, "Issue",
		"%s the cluster CA, valid until %s", what, ca.Cert.NotAfter.UTC().Format(time.RFC3339))
	return ca, nil
}

// userCA reads the CA a user brings: tls.crt and tls.key, or ca.crt and
// ca.key. The Secret carries none of the operator's labels, so it is read
// around the cache.
func (r *KairoClusterReconciler) userCA(ctx context.Context, c *kairov1alpha1.KairoCluster, name string) (*pki.Authority, error) {
	s := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: name}, s); err != nil {
		return nil, fmt.Errorf("CA Secret %s: %w", name, err)
	}
	certPEM, keyPEM := s.Data[resources.TLSCertKey], s.Data[resources.TLSKeyKey]
	if len(certPEM) == 0 {
		certPEM, keyPEM = s.Data[resources.CACertKey], s.Data[resources.CAKey]
	}
	ca, err := pki.ParseAuthority(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("CA Secret %s (keys tls.crt and tls.key, or ca.crt and ca.key): %w", name, err)
	}
	if !r.now().Before(ca.Cert.NotAfter) {
		return nil, fmt.Errorf("CA Secret %s: the CA expired at %s", name, ca.Cert.NotAfter.UTC().Format(time.RFC3339))
	}
	return ca, nil
}

// trustBundle is the trusted CAs after a pass: the signing CA first, then
// the others still valid.
func trustBundle(old []*x509.Certificate, signing *pki.Authority, now time.Time) []*x509.Certificate {
	out := []*x509.Certificate{signing.Cert}
	for _, ca := range old {
		if now.Before(ca.NotAfter) && pki.Fingerprint(ca) != pki.Fingerprint(signing.Cert) {
			out = append(out, ca)
		}
	}
	return out
}

// trustHash names a set of CAs, whatever their order.
func trustHash(cas []*x509.Certificate) string {
	fps := make([]string, 0, len(cas))
	for _, ca := range cas {
		fps = append(fps, pki.Fingerprint(ca))
	}
	slices.Sort(fps)
	sum := sha256.Sum256([]byte(strings.Join(fps, ",")))
	return hex.EncodeToString(sum[:])[:12]
}

// podsTrust reports whether every broker pod runs a template whose trust
// bundle is hash.
func podsTrust(pods map[int32]*corev1.Pod, hash string) bool {
	for _, pod := range pods {
		if !strings.HasPrefix(pod.Annotations[resources.CertificatesAnnotation], hash+"-") {
			return false
		}
	}
	return true
}

// podsRun reports whether brokers 0..replicas-1 all run, ready, with the
// certificates annotation version.
func podsRun(pods map[int32]*corev1.Pod, replicas int32, version string) bool {
	for id := int32(0); id < replicas; id++ {
		pod := pods[id]
		if pod == nil || !pod.DeletionTimestamp.IsZero() || !podReady(pod) ||
			pod.Annotations[resources.CertificatesAnnotation] != version {
			return false
		}
	}
	return true
}

// peerTLSMode is the --peer-tls mode of the brokers: required for a new
// cluster; permissive for one whose brokers ran without TLS between them
// (an earlier operator), until every broker runs permissive; then required.
func peerTLSMode(sts *appsv1.StatefulSet, pods map[int32]*corev1.Pod, replicas int32) string {
	if sts == nil {
		return "required"
	}
	switch sts.Annotations[resources.PeerTLSAnnotation] {
	case "required":
		return "required"
	case "permissive":
		for id := int32(0); id < replicas; id++ {
			pod := pods[id]
			if pod == nil || !podReady(pod) || pod.Annotations[resources.PeerTLSAnnotation] != "permissive" {
				return "permissive"
			}
		}
		return "required"
	}
	return "permissive"
}

// brokerCertificates is the broker certificates' Secret data for
// brokers 0..replicas-1: each kept while it is valid for its names, signed
// by a trusted CA and not due for renewal, else issued from signing. When
// any must be renewed (or they are signed by another CA than signing, and
// switchCA says the brokers trust signing), all are reissued together and
// reissued is true: one rolling restart. A broker without a certificate
// (a new one) gets its own without that.
func brokerCertificates(c *kairov1alpha1.KairoCluster, old map[string][]byte, replicas int32, signing *pki.Authority,
	trust []*x509.Certificate, switchCA bool, now time.Time, validity, renewBefore time.Duration) (map[string][]byte, bool, time.Time, error) {
	data := map[string][]byte{}
	var renew bool
	var missing []int32
	notAfter := time.Time{}
	for id := int32(0); id < replicas; id++ {
		certPEM, keyPEM := old[resources.BrokerCertKey(c, id)], old[resources.BrokerKeyKey(c, id)]
		cert := validLeaf(certPEM, keyPEM, trust, now, resources.BrokerDNSNames(c, id))
		switch {
		case cert == nil:
			missing = append(missing, id)
			continue
		case !now.Before(cert.NotAfter.Add(-renewBefore)) && switchCA, !signing.Signed(cert) && switchCA:
			renew = true
		}
		data[resources.BrokerCertKey(c, id)], data[resources.BrokerKeyKey(c, id)] = certPEM, keyPEM
		if notAfter.IsZero() || cert.NotAfter.Before(notAfter) {
			notAfter = cert.NotAfter
		}
	}
	issue := missing
	if renew {
		issue, data, notAfter = nil, map[string][]byte{}, time.Time{}
		for id := int32(0); id < replicas; id++ {
			issue = append(issue, id)
		}
	}
	for _, id := range issue {
		kp, err := signing.Issue(pki.LeafSpec{CommonName: resources.PodName(c, id), Organization: pki.OrgBroker,
			DNSNames: resources.BrokerDNSNames(c, id), Server: true, Client: true, NotAfter: now.Add(validity)}, now)
		if err != nil {
			return nil, false, time.Time{}, err
		}
		data[resources.BrokerCertKey(c, id)], data[resources.BrokerKeyKey(c, id)] = kp.CertPEM, kp.KeyPEM
		if notAfter.IsZero() || kp.Cert.NotAfter.Before(notAfter) {
			notAfter = kp.Cert.NotAfter
		}
	}
	// Keys of brokers beyond replicas (after a scale down) are dropped.
	return data, renew || (len(missing) == int(replicas) && len(old) > 0), notAfter, nil
}

// validLeaf is the certificate of certPEM when it parses with its key,
// verifies against trust now, and carries every name in names; else nil.
func validLeaf(certPEM, keyPEM []byte, trust []*x509.Certificate, now time.Time, names []string) *x509.Certificate {
	certs, err := pki.ParseCertificates(certPEM)
	if err != nil {
		return nil
	}
	key, err := pki.ParseKey(keyPEM)
	if err != nil {
		return nil
	}
	cert := certs[0]
	// The standard keys' Equal takes a crypto.PublicKey, a defined type:
	// an interface asking for Equal(any) matches none of them.
	if pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(cert.PublicKey) {
		return nil
	}
	pool := x509.NewCertPool()
	for _, ca := range trust {
		pool.AddCert(ca)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return nil
	}
	for _, n := range names {
		if !slices.Contains(cert.DNSNames, n) {
			return nil
		}
	}
	return cert
}

// allSameKey reports whether every CA of trust has signing's key: the
// bundle of a renewal that kept the key.
func allSameKey(trust []*x509.Certificate, signing *pki.Authority) bool {
	for _, ca := range trust {
		if !pki.SameKey(ca, signing.Cert) {
			return false
		}
	}
	return len(trust) > 0
}

// allSignedBy reports whether every broker's certificate in the Secret is
// signed by ca.
func allSignedBy(c *kairov1alpha1.KairoCluster, s *corev1.Secret, replicas int32, ca *pki.Authority) bool {
	for id := int32(0); id < replicas; id++ {
		certs, err := pki.ParseCertificates(s.Data[resources.BrokerCertKey(c, id)])
		if err != nil || !ca.Signed(certs[0]) {
			return false
		}
	}
	return true
}

// issuerOf is the CA of trust that signed broker 0's certificate.
func issuerOf(c *kairov1alpha1.KairoCluster, data map[string][]byte, trust []*x509.Certificate) *x509.Certificate {
	certs, err := pki.ParseCertificates(data[resources.BrokerCertKey(c, 0)])
	if err != nil {
		return trust[0]
	}
	for _, ca := range trust {
		if pki.IssuedBy(certs[0], ca) {
			return ca
		}
	}
	return trust[0]
}

// operatorCertificate keeps the operator's client certificate for the
// cluster: issued by the CA the broker certificates come from (the brokers
// trust it already), renewed with them.
func (r *KairoClusterReconciler) operatorCertificate(ctx context.Context, st *reconcileState, ca *clusterCA, now time.Time) error {
	c := st.cluster
	s := &corev1.Secret{}
	if err := r.getOwned(ctx, c, resources.OperatorCertSecretName(c), s); err != nil {
		return err
	}
	certPEM, keyPEM, err := ca.issue(pki.OperatorName, pki.OrgOperator, s.Data[resources.TLSCertKey], s.Data[resources.TLSKeyKey], now)
	if err != nil {
		return err
	}
	return r.writeSecret(ctx, st, resources.OperatorCertSecretName(c), corev1.SecretTypeTLS, nil, map[string][]byte{
		resources.TLSCertKey: certPEM, resources.TLSKeyKey: keyPEM, resources.CACertKey: pki.EncodeCertificates(ca.trust...)})
}

// parseBundle is the certificates of a PEM bundle, none when it does not parse.
func parseBundle(b []byte) []*x509.Certificate {
	certs, err := pki.ParseCertificates(b)
	if err != nil {
		return nil
	}
	return certs
}

// getOwned reads a Secret the operator keeps for the cluster into s; a
// missing one leaves s empty with its name set. One that exists but is not
// the cluster's is an error: the operator never adopts another's key.
func (r *KairoClusterReconciler) getOwned(ctx context.Context, c *kairov1alpha1.KairoCluster, name string, s *corev1.Secret) error {
	key := types.NamespacedName{Namespace: c.Namespace, Name: name}
	err := r.Get(ctx, key, s)
	if apierrors.IsNotFound(err) {
		// The cache holds only labelled Secrets: look around it before
		// taking the name.
		err = r.APIReader.Get(ctx, key, s)
		if apierrors.IsNotFound(err) {
			*s = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace}}
			return nil
		}
		if err == nil {
			return fmt.Errorf("secret %s %w", name, errNotOwned)
		}
	}
	if err == nil && !metav1.IsControlledBy(s, c) {
		return fmt.Errorf("secret %s %w", name, errNotOwned)
	}
	return err
}

// writeSecret creates or updates one of the cluster's Secrets with exactly
// data (and annotations merged in; an empty value removes one), writing
// only when something differs.
func (r *KairoClusterReconciler) writeSecret(ctx context.Context, st *reconcileState, name string, typ corev1.SecretType,
	annotations map[string]string, data map[string][]byte) error {
	c := st.cluster
	s := &corev1.Secret{}
	if err := r.getOwned(ctx, c, name, s); err != nil {
		return err
	}
	before := s.DeepCopy()
	s.Labels = mergeStrings(s.Labels, resources.Labels(c))
	for k, v := range annotations {
		if v == "" {
			delete(s.Annotations, k)
			continue
		}
		s.Annotations = mergeStrings(s.Annotations, map[string]string{k: v})
	}
	s.Data = data
	if s.Type == "" {
		s.Type = typ
	}
	if err := controllerutil.SetControllerReference(c, s, r.Scheme); err != nil {
		return err
	}
	if s.ResourceVersion == "" {
		if err := r.Create(ctx, s); err != nil {
			return err
		}
		st.log.Info("Created child", "kind", "Secret", "name", name)
		return nil
	}
	if secretsEqual(before, s) {
		return nil
	}
	if err := r.Update(ctx, s); err != nil {
		return err
	}
	st.log.Info("Updated child", "kind", "Secret", "name", name)
	return nil
}

func secretsEqual(a, b *corev1.Secret) bool {
	if len(a.Data) != len(b.Data) || !mapsEqual(a.Labels, b.Labels) || !mapsEqual(a.Annotations, b.Annotations) ||
		len(a.OwnerReferences) != len(b.OwnerReferences) {
		return false
	}
	for k, v := range a.Data {
		if w, ok := b.Data[k]; !ok || string(v) != string(w) {
			return false
		}
	}
	return true
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}

// brokerPodsAndSet are the cluster's broker pods by id and its
// StatefulSet (nil before it exists).
func (r *KairoClusterReconciler) brokerPodsAndSet(ctx context.Context, c *kairov1alpha1.KairoCluster) (map[int32]*corev1.Pod, *appsv1.StatefulSet, error) {
	sts := &appsv1.StatefulSet{}
	err := r.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: resources.StatefulSetName(c)}, sts)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil, nil
	case err != nil:
		return nil, nil, err
	case !metav1.IsControlledBy(sts, c):
		return nil, nil, nil
	}
	var list corev1.PodList
	if err := r.List(ctx, &list, client.InNamespace(c.Namespace), client.MatchingLabels(resources.SelectorLabels(c))); err != nil {
		return nil, nil, err
	}
	pods := map[int32]*corev1.Pod{}
	for i := range list.Items {
		if id, ok := ordinal(c, list.Items[i].Name, ""); ok {
			pods[id] = &list.Items[i]
		}
	}
	return pods, sts, nil
}
