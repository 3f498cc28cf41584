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
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/controllers/resources"
	"github.com/kairolog/kairolog/internal/pki"
)

// The operator speaks to cert-manager through its Certificate resource
// only, as unstructured objects: cert-manager is optional, so the operator
// neither imports its API nor watches its kinds (a watch of a kind that is
// not installed would stop the manager). It watches the Secrets cert-manager
// writes instead; each Certificate's secretTemplate gives them the
// operator's labels, so the manager's cache holds them.

// certificateGVK is cert-manager's Certificate.
var certificateGVK = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}

// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;watch;create;update;patch;delete

// issuedCertificate is one certificate the operator asks cert-manager for.
type issuedCertificate struct {
	// name of the Certificate and of the Secret cert-manager writes.
	name string
	// commonName is the principal; org the role (pki.OrgBroker, ...).
	commonName, org string
	// dnsNames of a broker certificate; server adds the server auth usage.
	dnsNames []string
	server   bool
	// labels go on the Secret, for the operator's cache and watches.
	labels map[string]string
}

// certificateSpec is the Certificate's spec: an ECDSA P-256 key (as the
// operator's own certificates), a new key at every renewal, the role as the
// subject organization, and the cluster's validity and renewBefore.
func certificateSpec(ref *kairov1alpha1.IssuerReference, ic issuedCertificate, validity, renewBefore time.Duration) map[string]any {
	usages := []any{"digital signature", "client auth"}
	if ic.server {
		usages = append(usages, "server auth")
	}
	labels := map[string]any{}
	for k, v := range ic.labels {
		labels[k] = v
	}
	spec := map[string]any{
		"secretName":     ic.name,
		"secretTemplate": map[string]any{"labels": labels},
		"commonName":     ic.commonName,
		"subject":        map[string]any{"organizations": []any{ic.org}},
		"duration":       validity.String(),
		"renewBefore":    renewBefore.String(),
		"privateKey":     map[string]any{"algorithm": "ECDSA", "size": int64(256), "rotationPolicy": "Always"},
		"usages":         usages,
		"issuerRef":      map[string]any{"name": ref.Name, "kind": issuerKind(ref), "group": issuerGroup(ref)},
	}
	if len(ic.dnsNames) > 0 {
		names := make([]any, 0, len(ic.dnsNames))
		for _, n := range ic.dnsNames {
			names = append(names, n)
		}
		spec["dnsNames"] = names
	}
	return spec
}

func issuerKind(ref *kairov1alpha1.IssuerReference) string {
	if ref.Kind == "" {
		return "Issuer"
	}
	return ref.Kind
}

func issuerGroup(ref *kairov1alpha1.IssuerReference) string {
	if ref.Group == "" {
		return "cert-manager.io"
	}
	return ref.Group
}

// applyCertificate creates or updates the Certificate ic in namespace ns,
// controlled by owner (deleted with it), writing only when its spec
// differs.
func applyCertificate(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object,
	spec map[string]any, name string) error {
	cert := &unstructured.Unstructured{}
	cert.SetGroupVersionKind(certificateGVK)
	err := c.Get(ctx, types.NamespacedName{Namespace: owner.GetNamespace(), Name: name}, cert)
	switch {
	case apierrors.IsNotFound(err):
		cert = &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		cert.SetGroupVersionKind(certificateGVK)
		cert.SetNamespace(owner.GetNamespace())
		cert.SetName(name)
		if err := controllerutil.SetControllerReference(owner, cert, scheme); err != nil {
			return err
		}
		return c.Create(ctx, cert)
	case err != nil:
		return err
	}
	if !isControlledBy(cert, owner) {
		return fmt.Errorf("certificate %s %w", name, errNotOwned)
	}
	if sameJSON(cert.Object["spec"], spec) {
		return nil
	}
	cert.Object["spec"] = spec
	return c.Update(ctx, cert)
}

func isControlledBy(obj, owner client.Object) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && ref.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

// sameJSON compares two JSON-shaped values by their encoding (map keys
// sorted), whatever number types they hold.
func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// certificateNotReady is why Certificate name in ns has not produced a
// usable Secret yet: its Ready condition's message when it has one.
func certificateNotReady(ctx context.Context, c client.Reader, ns, name string) string {
	cert := &unstructured.Unstructured{}
	cert.SetGroupVersionKind(certificateGVK)
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cert); err != nil {
		return fmt.Sprintf("Certificate %s: %v", name, err)
	}
	conds, _, _ := unstructured.NestedSlice(cert.Object, "status", "conditions")
	for _, raw := range conds {
		cond, _ := raw.(map[string]any)
		if cond["type"] == "Ready" {
			return fmt.Sprintf("Certificate %s is not ready: %v (%v)", name, cond["message"], cond["reason"])
		}
	}
	return fmt.Sprintf("Certificate %s has no Secret from cert-manager yet", name)
}

// issuedKeyPair is a Secret cert-manager wrote: the certificate, its key
// and the CAs of ca.crt, checked to belong together.
type issuedKeyPair struct {
	secret          *corev1.Secret
	certPEM, keyPEM []byte
	cert            *x509.Certificate
	cas             []*x509.Certificate
}

// readIssuedSecret reads the Secret cert-manager writes for Certificate
// name. A missing Secret, one without a certificate and its key, or
// whose certificate is not signed by a CA of its ca.crt is nil with the
// reason; an issuer that puts no CA in ca.crt cannot be used, since the
// brokers verify each other by it.
func readIssuedSecret(ctx context.Context, c client.Reader, ns, name string, now time.Time) (*issuedKeyPair, string, error) {
	s := &corev1.Secret{}
	err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return nil, certificateNotReady(ctx, c, ns, name), nil
	}
	if err != nil {
		return nil, "", err
	}
	kp := &issuedKeyPair{secret: s, certPEM: s.Data[resources.TLSCertKey], keyPEM: s.Data[resources.TLSKeyKey]}
	if kp.cas = parseBundle(s.Data[resources.CACertKey]); len(kp.cas) == 0 {
		return nil, fmt.Sprintf("Secret %s from cert-manager has no CA in %s: the issuer must be one that puts its CA there (a CA or self-signed issuer, Vault)",
			name, resources.CACertKey), nil
	}
	if kp.cert = validLeaf(kp.certPEM, kp.keyPEM, kp.cas, now, nil); kp.cert == nil {
		return nil, certificateNotReady(ctx, c, ns, name), nil
	}
	return kp, "", nil
}

// adoptIssuedSecret makes owner an owner, not the controller, of a Secret
// cert-manager wrote, so that it is deleted with the cluster or user as the
// Certificate is. cert-manager applies its Secrets server-side and leaves
// an owner reference it did not set alone.
func adoptIssuedSecret(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object, s *corev1.Secret) error {
	for _, ref := range s.OwnerReferences {
		if ref.UID == owner.GetUID() {
			return nil
		}
	}
	patch := client.MergeFromWithOptions(s.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if err := controllerutil.SetOwnerReference(owner, s, scheme); err != nil {
		return err
	}
	return c.Patch(ctx, s, patch)
}

// signerOf is the CA of cas that signed cert, nil when none did.
func signerOf(cert *x509.Certificate, cas []*x509.Certificate) *x509.Certificate {
	for _, ca := range cas {
		if cert.CheckSignatureFrom(ca) == nil {
			return ca
		}
	}
	return nil
}

// addCAs appends to cas those of more it lacks.
func addCAs(cas []*x509.Certificate, more ...*x509.Certificate) []*x509.Certificate {
	for _, ca := range more {
		known := false
		for _, have := range cas {
			known = known || pki.Fingerprint(have) == pki.Fingerprint(ca)
		}
		if !known {
			cas = append(cas, ca)
		}
	}
	return cas
}

// issuedSecret passes the Secrets cert-manager writes for a cluster:
// labelled by the operator through the Certificate's secretTemplate, owned
// by nobody (the operator's own Secrets have the cluster as controller and
// come through Owns), and not a KairoUser's.
var issuedSecret = predicate.NewPredicateFuncs(func(obj client.Object) bool {
	l := obj.GetLabels()
	return l[resources.LabelInstance] != "" && l[kairov1alpha1.UserLabel] == "" && metav1.GetControllerOf(obj) == nil
})

// userOfIssuedSecret maps a Secret cert-manager writes for a tls
// KairoUser (labelled with the user's name, owned by nobody) to the user.
func userOfIssuedSecret(_ context.Context, obj client.Object) []reconcile.Request {
	user := obj.GetLabels()[kairov1alpha1.UserLabel]
	if user == "" || metav1.GetControllerOf(obj) != nil {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: user}}}
}
