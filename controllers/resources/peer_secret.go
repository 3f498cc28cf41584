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

	"github.com/kairolog/kairolog/broker/peer"
)

// PeerSecretBuilder builds the Secret holding the cluster secret brokers
// prove to each other on their peer listeners (--peer-secret-file). The
// operator generates it once, from crypto/rand, and never changes it: the
// brokers read it when they start, so a new value would split a running
// cluster. Deleting the KairoCluster deletes it (owner reference).
type PeerSecretBuilder struct{ *Builder }

// Build returns an empty Secret named <cluster>-peer-secret.
func (b *PeerSecretBuilder) Build() (client.Object, error) {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: PeerSecretName(b.Cluster), Namespace: b.Cluster.Namespace},
		Type:       corev1.SecretTypeOpaque,
	}, nil
}

// Update sets the labels and the owner, and generates the secret when the
// Secret has none (a new Secret, or one whose key was removed); an
// existing value is kept.
func (b *PeerSecretBuilder) Update(obj client.Object) error {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return fmt.Errorf("resources: PeerSecretBuilder got %T", obj)
	}
	b.mergeLabels(s)
	if _, err := peer.NewSecret(string(s.Data[PeerSecretKey])); err != nil {
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[PeerSecretKey] = []byte(peer.GenerateSecret().Reveal())
	}
	return b.own(s)
}
