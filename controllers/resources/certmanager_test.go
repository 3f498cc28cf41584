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
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// TestCertManagerTLSVolume: with a cert-manager issuer the TLS volume
// projects the Secret cert-manager writes for each broker, its tls.crt and
// tls.key under the pod's names, beside the trust bundle; the operator's
// certificate has a name of its own.
func TestCertManagerTLSVolume(t *testing.T) {
	c := testCluster()
	c.Spec.Security = &kairov1alpha1.SecuritySpec{CA: &kairov1alpha1.CertificateAuthoritySpec{
		IssuerRef: &kairov1alpha1.IssuerReference{Name: "ca"}}}
	b := testBuilder(t, c)
	b.Replicas, b.Certificates = 2, "abc-def"
	sts := build(t, &StatefulSetBuilder{b}).(*appsv1.StatefulSet)
	var sources []corev1.VolumeProjection
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Name == TLSVolume {
			sources = v.Projected.Sources
		}
	}
	tests := []struct {
		secret string
		items  []corev1.KeyToPath
	}{
		{"kairo-0-tls", []corev1.KeyToPath{{Key: "tls.crt", Path: "kairo-0.crt"}, {Key: "tls.key", Path: "kairo-0.key"}}},
		{"kairo-1-tls", []corev1.KeyToPath{{Key: "tls.crt", Path: "kairo-1.crt"}, {Key: "tls.key", Path: "kairo-1.key"}}},
		{"kairo-ca-cert", []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}},
	}
	if len(sources) != len(tests) {
		t.Fatalf("TLS volume projects %d sources, want %d: %+v", len(sources), len(tests), sources)
	}
	for i, tc := range tests {
		if sources[i].Secret.Name != tc.secret || !slices.Equal(sources[i].Secret.Items, tc.items) {
			t.Errorf("source %d: %s %+v, want %s %+v", i, sources[i].Secret.Name, sources[i].Secret.Items, tc.secret, tc.items)
		}
	}
	if got := OperatorCertSecretName(c); got != "kairo-operator-tls" {
		t.Errorf("operator certificate Secret %q", got)
	}
}
