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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

var _ = Describe("A supplied password on real brokers", Ordered, func() {
	const ns = kcNamespacePrefix + "password"

	BeforeAll(func() {
		requireControllerManager()
		kcNamespace(ns)
	})

	It("reaches the brokers when its Secret changes, before any resync", func() {
		kc, broker, _ := secureBrokers(ns, "pw", 1, &kairov1alpha1.SecuritySpec{
			Listeners: kairov1alpha1.ListenersSecurity{HTTP: &kairov1alpha1.ListenerSecurity{TLS: true, Authentication: kairov1alpha1.AuthenticationSCRAM}},
		}, nil)
		Eventually(func(g Gomega) {
			g.Expect(condition(getCluster(client.ObjectKeyFromObject(kc)).Status.Conditions, kairov1alpha1.ConditionReady).Status).
				To(Equal(metav1.ConditionTrue))
		}).WithTimeout(60 * time.Second).Should(Succeed())

		By("a scram-sha-512 user whose password is in a Secret of its own")
		pwSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "erin-password"},
			Data: map[string][]byte{"pw": []byte("the first password")}}
		Expect(k8sClient.Create(ctx, pwSecret)).To(Succeed())
		erin := &kairov1alpha1.KairoUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "erin"},
			Spec: kairov1alpha1.KairoUserSpec{ClusterRef: kairov1alpha1.ClusterReference{Name: kc.Name},
				Authentication: kairov1alpha1.UserAuthentication{Type: kairov1alpha1.UserAuthenticationSCRAM,
					Password: &kairov1alpha1.PasswordSource{ValueFrom: kairov1alpha1.PasswordValueFrom{
						SecretKeyRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: pwSecret.Name}, Key: "pw"}}}}}}
		Expect(k8sClient.Create(ctx, erin)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(condition(get(erin).Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, ReasonUserApplied))
			g.Expect(broker.withPassword("erin", "the first password", http.MethodGet, "/metadata", nil).status).To(Equal(http.StatusOK))
		}).WithTimeout(60 * time.Second).Should(Succeed())

		By("the user changing the password in the Secret: the brokers take the new one and refuse the old one well before the next resync")
		// The last pass over erin has just put the user on the brokers; the
		// next resync is userResync after it. Only a watch of the password
		// Secret brings the change sooner.
		Expect(update(pwSecret, func(s *corev1.Secret) { s.Data["pw"] = []byte("the second password") })).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(broker.withPassword("erin", "the second password", http.MethodGet, "/metadata", nil).status).To(Equal(http.StatusOK))
			g.Expect(broker.withPassword("erin", "the first password", http.MethodGet, "/metadata", nil).status).To(Equal(http.StatusUnauthorized))
		}).WithTimeout(userResync / 2).WithPolling(250 * time.Millisecond).Should(Succeed())
		Eventually(func(g Gomega) []byte { return secretOf(ns, "erin")(g).Data[UserPasswordKey] }).
			Should(Equal([]byte("the second password")), "the user's own Secret carries the new password too")
	})
})
