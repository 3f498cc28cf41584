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
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/controllers/resources"
	"github.com/kairolog/kairolog/internal/pki"
)

// UserCertificateName is the cert-manager Certificate, and the Secret it
// writes, of a tls KairoUser of a cluster with an issuerRef. KairoUser
// names cannot start with kairolog-, so it is never a user's own Secret.
func UserCertificateName(u *kairov1alpha1.KairoUser) string { return "kairolog-user-" + u.Name }

// issuedCertificate is a tls user's Secret data when the cluster's
// certificates come from a cert-manager issuer: the operator asks for a
// Certificate (owned by the KairoUser, its common name the user's name,
// its organization pki.OrgUser) and copies what cert-manager writes into
// the user's own Secret, with the cluster's trust bundle and a PKCS#12
// bundle, so that users see the same keys whoever issues. cert-manager
// renews the certificate; the copy follows, since its Secret wakes the
// user.
func (r *KairoUserReconciler) issuedCertificate(ctx context.Context, u *kairov1alpha1.KairoUser, c *kairov1alpha1.KairoCluster,
	old map[string][]byte) (map[string][]byte, error) {
	ref := c.Spec.Security.CA.IssuerRef
	validity, renewBefore := caDurations(c)
	name := UserCertificateName(u)
	labels := map[string]string{resources.LabelManagedBy: resources.ManagedBy, resources.LabelName: resources.AppName,
		resources.LabelInstance: c.Name, kairov1alpha1.UserLabel: u.Name}
	ic := issuedCertificate{name: name, commonName: u.Name, org: pki.OrgUser, labels: labels}
	err := applyCertificate(ctx, r.Client, r.Scheme, u, certificateSpec(ref, ic, validity, renewBefore), name)
	switch {
	case meta.IsNoMatchError(err):
		return nil, &userError{ReasonClusterNotReady, fmt.Sprintf(
			"KairoCluster %s names a cert-manager issuer, and cert-manager's Certificate kind is not installed", c.Name)}
	case errors.Is(err, errNotOwned):
		return nil, &userError{ReasonResourceNotOwned, err.Error()}
	case err != nil:
		return nil, err
	}
	kp, why, err := readIssuedSecret(ctx, r.Client, u.Namespace, name, r.now())
	if err != nil {
		return nil, err
	}
	if why != "" {
		return nil, &userError{ReasonWaitingForIssuer, why}
	}
	if err := adoptIssuedSecret(ctx, r.Client, r.Scheme, u, kp.secret); err != nil {
		return nil, err
	}
	trustSecret := &corev1.Secret{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: resources.CACertSecretName(c)}, trustSecret); err != nil {
		return nil, fmt.Errorf("%w: %v", errNoClusterCA, err)
	}
	trust := addCAs(parseBundle(trustSecret.Data[resources.CACertKey]), kp.cas...)
	return withPKCS12(u, kp.certPEM, kp.keyPEM, trust, old)
}
