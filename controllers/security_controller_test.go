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
	"crypto/x509"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	pkcs12 "software.sslmate.com/src/go-pkcs12"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/controllers/resources"
	"github.com/kairolog/kairolog/internal/pki"
)

// userResync is the KairoUser reconciler's resync in this suite: long
// enough that a spec can tell a change a watch brought from one a resync
// brought.
const userResync = 20 * time.Second

func init() {
	reconcilerSetups = append(reconcilerSetups, func(mgr ctrl.Manager) error {
		return (&KairoUserReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Scheme: mgr.GetScheme(),
			Brokers: &ServiceBrokerClients{Timeout: 3 * time.Second, Reader: mgr.GetClient()}, ResyncInterval: userResync}).
			SetupWithManager(mgr)
	})
}

// secretOf reads a Secret of the test namespace.
func secretOf(ns, name string) func(g Gomega) *corev1.Secret {
	return func(g Gomega) *corev1.Secret {
		s := &corev1.Secret{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)).To(Succeed())
		return s
	}
}

func certsOf(g Gomega, pemBytes []byte) []*x509.Certificate {
	certs, err := pki.ParseCertificates(pemBytes)
	g.Expect(err).NotTo(HaveOccurred())
	return certs
}

var _ = Describe("Cluster certificates and KairoUsers", Ordered, func() {
	const ns = kcNamespacePrefix + "security"

	BeforeAll(func() {
		requireControllerManager()
		kcNamespace(ns)
	})

	newCluster := func(name string, mutate func(*kairov1alpha1.KairoCluster)) *kairov1alpha1.KairoCluster {
		kc := &kairov1alpha1.KairoCluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
				Annotations: map[string]string{kairov1alpha1.EndpointOverrideAnnotation: closedEndpoint()}},
			Spec: kairov1alpha1.KairoClusterSpec{Replicas: 3,
				Storage: kairov1alpha1.StorageSpec{Size: resource.MustParse("1Gi")}},
		}
		if mutate != nil {
			mutate(kc)
		}
		Expect(k8sClient.Create(ctx, kc)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, kc))).To(Succeed()) })
		return kc
	}

	It("creates the CA, the trust bundle, the broker and operator certificates and the NetworkPolicy, owned by the cluster", func() {
		kc := newCluster("certs", nil)
		var ca *x509.Certificate
		Eventually(func(g Gomega) {
			caSecret := secretOf(ns, "certs-ca")(g)
			g.Expect(metav1.IsControlledBy(caSecret, kc)).To(BeTrue())
			ca = certsOf(g, caSecret.Data["ca.crt"])[0]
			g.Expect(ca.IsCA).To(BeTrue())
			g.Expect(ca.NotAfter.Sub(ca.NotBefore)).To(BeNumerically("~", DefaultCAValidity, time.Hour))

			bundle := secretOf(ns, "certs-ca-cert")(g)
			g.Expect(metav1.IsControlledBy(bundle, kc)).To(BeTrue())
			g.Expect(bundle.Data).NotTo(HaveKey("ca.key"), "the public bundle carries no key")
			g.Expect(certsOf(g, bundle.Data["ca.crt"])).To(HaveLen(1))

			brokers := secretOf(ns, "certs-broker-certs")(g)
			g.Expect(metav1.IsControlledBy(brokers, kc)).To(BeTrue())
			roots := x509.NewCertPool()
			roots.AddCert(ca)
			for id := int32(0); id < 3; id++ {
				cert := certsOf(g, brokers.Data[resources.BrokerCertKey(kc, id)])[0]
				g.Expect(brokers.Data).To(HaveKey(resources.BrokerKeyKey(kc, id)))
				g.Expect(pki.IsBroker(cert)).To(BeTrue())
				for _, name := range []string{resources.PeerHost(kc, id), "certs." + ns + ".svc", "localhost"} {
					_, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: roots,
						KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
					g.Expect(err).NotTo(HaveOccurred(), name)
				}
			}

			op := secretOf(ns, "certs-operator-cert")(g)
			g.Expect(op.Type).To(Equal(corev1.SecretTypeTLS))
			opCert := certsOf(g, op.Data["tls.crt"])[0]
			g.Expect(opCert.Subject.CommonName).To(Equal(pki.OperatorName))
			g.Expect(pki.Role(opCert)).To(Equal(pki.OrgOperator))

			np := &networkingv1.NetworkPolicy{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "certs"}, np)).To(Succeed())
			g.Expect(metav1.IsControlledBy(np, kc)).To(BeTrue())

			st := getCluster(client.ObjectKeyFromObject(kc)).Status.Security
			g.Expect(st).NotTo(BeNil())
			g.Expect(st.CASecret).To(Equal("certs-ca-cert"))
			g.Expect(st.PeerTLS).To(Equal("required"))
			g.Expect(st.CANotAfter.Time).To(BeTemporally("==", ca.NotAfter))
		}).WithTimeout(20 * time.Second).Should(Succeed())

		By("turning the NetworkPolicy off")
		Expect(update(kc, func(kc *kairov1alpha1.KairoCluster) {
			kc.Spec.Security = &kairov1alpha1.SecuritySpec{NetworkPolicy: kairov1alpha1.NetworkPolicyDisabled}
		})).To(Succeed())
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "certs"}, &networkingv1.NetworkPolicy{})
		}).WithTimeout(15 * time.Second).Should(MatchError(ContainSubstring("not found")))
	})

	It("renews a short-lived CA with the same key: certificates reissued under it, still trusted by a client holding the old ca.crt", func() {
		kc := newCluster("renew", func(kc *kairov1alpha1.KairoCluster) {
			kc.Spec.Replicas = 1
			kc.Spec.Security = &kairov1alpha1.SecuritySpec{CA: &kairov1alpha1.CertificateAuthoritySpec{
				Validity: &metav1.Duration{Duration: 60 * time.Second}, RenewBefore: &metav1.Duration{Duration: 20 * time.Second}}}
		})
		var first *x509.Certificate
		var firstKey []byte
		Eventually(func(g Gomega) {
			caSecret := secretOf(ns, "renew-ca")(g)
			first, firstKey = certsOf(g, caSecret.Data["ca.crt"])[0], caSecret.Data["ca.key"]
		}).WithTimeout(20 * time.Second).Should(Succeed())

		By("the renewal 20 s before expiry (40 s after creation): a new certificate for the same key")
		var second *x509.Certificate
		Eventually(func(g Gomega) {
			caSecret := secretOf(ns, "renew-ca")(g)
			second = certsOf(g, caSecret.Data["ca.crt"])[0]
			g.Expect(pki.Fingerprint(second)).NotTo(Equal(pki.Fingerprint(first)))
			g.Expect(string(caSecret.Data["ca.key"])).To(Equal(string(firstKey)), "the renewal replaced the key")
			g.Expect(pki.SameKey(second, first)).To(BeTrue())
		}).WithTimeout(60 * time.Second).Should(Succeed())
		Eventually(func() []string { return eventReasons(client.ObjectKeyFromObject(kc)) }).WithTimeout(10 * time.Second).
			Should(ContainElement(ReasonCARenewed))

		By("the broker certificate reissued under the renewed CA, verifying against the old ca.crt alone")
		Eventually(func(g Gomega) {
			cert := certsOf(g, secretOf(ns, "renew-broker-certs")(g).Data[resources.BrokerCertKey(kc, 0)])[0]
			g.Expect(pki.IssuedBy(cert, second)).To(BeTrue(), "the broker certificate is still the old CA's")
			old := x509.NewCertPool()
			old.AddCert(first)
			_, err := cert.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: old, CurrentTime: first.NotAfter.Add(-time.Second),
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
			g.Expect(err).NotTo(HaveOccurred(), "a client holding the old ca.crt")
		}).WithTimeout(40 * time.Second).Should(Succeed())

		By("the trust bundle: the renewed certificate, which verifies everything the old one did")
		Eventually(func(g Gomega) {
			trust := certsOf(g, secretOf(ns, "renew-ca-cert")(g).Data["ca.crt"])
			g.Expect(trust).To(HaveLen(1))
			g.Expect(pki.SameKey(trust[0], first)).To(BeTrue())
		}).WithTimeout(40 * time.Second).Should(Succeed())
	})

	It("renews the CA on kairolog.io/force-renew; a deleted CA Secret is a new key, both CAs trusted meanwhile", func() {
		kc := newCluster("force", func(kc *kairov1alpha1.KairoCluster) { kc.Spec.Replicas = 1 })
		key := client.ObjectKeyFromObject(kc)
		var first, leaf *x509.Certificate
		var generation string
		Eventually(func(g Gomega) {
			first = certsOf(g, secretOf(ns, "force-ca")(g).Data["ca.crt"])[0]
			brokers := secretOf(ns, "force-broker-certs")(g)
			leaf = certsOf(g, brokers.Data[resources.BrokerCertKey(kc, 0)])[0]
			generation = brokers.Annotations[resources.CertificateGenerationAnnotation]
			st := getCluster(key).Status.Security
			g.Expect(st).NotTo(BeNil())
			g.Expect(st.CertificatesNotAfter).NotTo(BeNil())
		}).WithTimeout(20 * time.Second).Should(Succeed())

		By("annotating the CA Secret")
		caSecret := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "force-ca"}, caSecret)).To(Succeed())
		Expect(update(caSecret, func(s *corev1.Secret) {
			s.Annotations = map[string]string{resources.ForceRenewAnnotation: "true"}
		})).To(Succeed())
		var second *x509.Certificate
		Eventually(func(g Gomega) {
			s := secretOf(ns, "force-ca")(g)
			second = certsOf(g, s.Data["ca.crt"])[0]
			g.Expect(pki.Fingerprint(second)).NotTo(Equal(pki.Fingerprint(first)))
			g.Expect(pki.SameKey(second, first)).To(BeTrue(), "the renewal replaced the key")
			g.Expect(s.Annotations).NotTo(HaveKey(resources.ForceRenewAnnotation), "the annotation stays after the renewal")
			brokers := secretOf(ns, "force-broker-certs")(g)
			cert := certsOf(g, brokers.Data[resources.BrokerCertKey(kc, 0)])[0]
			g.Expect(pki.IssuedBy(cert, second)).To(BeTrue(), "the broker certificate is not reissued")
			g.Expect(pki.Fingerprint(cert)).NotTo(Equal(pki.Fingerprint(leaf)))
			g.Expect(brokers.Annotations[resources.CertificateGenerationAnnotation]).NotTo(Equal(generation))
			st := getCluster(key).Status.Security
			g.Expect(st.CANotAfter.Time).To(BeTemporally("==", second.NotAfter))
			g.Expect(st.CertificatesNotAfter.Time).To(BeTemporally("==", cert.NotAfter))
			g.Expect(certsOf(g, secretOf(ns, "force-ca-cert")(g).Data["ca.crt"])).To(HaveLen(1))
		}).WithTimeout(20 * time.Second).Should(Succeed())

		By("deleting the CA Secret: a CA with a new key, trusted next to the old one")
		Expect(k8sClient.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "force-ca"}})).To(Succeed())
		Eventually(func(g Gomega) {
			third := certsOf(g, secretOf(ns, "force-ca")(g).Data["ca.crt"])[0]
			g.Expect(pki.SameKey(third, second)).To(BeFalse())
			trust := certsOf(g, secretOf(ns, "force-ca-cert")(g).Data["ca.crt"])
			g.Expect(trust).To(HaveLen(2))
			g.Expect(slices.ContainsFunc(trust, func(c *x509.Certificate) bool { return pki.Fingerprint(c) == pki.Fingerprint(second) })).To(BeTrue())
			cert := certsOf(g, secretOf(ns, "force-broker-certs")(g).Data[resources.BrokerCertKey(kc, 0)])[0]
			g.Expect(pki.IssuedBy(cert, third)).To(BeTrue())
		}).WithTimeout(20 * time.Second).Should(Succeed())
	})

	It("issues from a CA the user brings, and says so when it is missing", func() {
		kc := newCluster("byo", func(kc *kairov1alpha1.KairoCluster) {
			kc.Spec.Replicas = 1
			kc.Spec.Security = &kairov1alpha1.SecuritySpec{CA: &kairov1alpha1.CertificateAuthoritySpec{SecretName: "my-ca"}}
		})
		key := client.ObjectKeyFromObject(kc)
		Eventually(func(g Gomega) {
			g.Expect(condition(getCluster(key).Status.Conditions, kairov1alpha1.ConditionDegraded)).To(haveCondition(metav1.ConditionTrue, ReasonCAUnusable))
		}).WithTimeout(20 * time.Second).Should(Succeed())

		ca, err := pki.NewAuthority("my company CA", time.Now(), time.Now().Add(24*time.Hour))
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "my-ca"},
			Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": ca.CertPEM, "tls.key": ca.KeyPEM}})).To(Succeed())
		Eventually(func(g Gomega) {
			cert := certsOf(g, secretOf(ns, "byo-broker-certs")(g).Data[resources.BrokerCertKey(kc, 0)])[0]
			g.Expect(ca.Signed(cert)).To(BeTrue())
			g.Expect(condition(getCluster(key).Status.Conditions, kairov1alpha1.ConditionDegraded).Reason).NotTo(Equal(ReasonCAUnusable))
		}).WithTimeout(40 * time.Second).Should(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "byo-ca"}, &corev1.Secret{})).NotTo(Succeed(),
			"no operator CA is created next to the user's")
	})

	It("keeps KairoUser credentials in Secrets named after the users", func() {
		newCluster("users", func(kc *kairov1alpha1.KairoCluster) { kc.Spec.Replicas = 1 })
		user := func(name string, auth kairov1alpha1.UserAuthentication) *kairov1alpha1.KairoUser {
			u := &kairov1alpha1.KairoUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: kairov1alpha1.KairoUserSpec{ClusterRef: kairov1alpha1.ClusterReference{Name: "users"}, Authentication: auth}}
			Expect(k8sClient.Create(ctx, u)).To(Succeed())
			return u
		}
		alice := user("alice", kairov1alpha1.UserAuthentication{Type: kairov1alpha1.UserAuthenticationSCRAM})
		Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bob-password"},
			Data: map[string][]byte{"pw": []byte("bobs own password")}})).To(Succeed())
		bob := user("bob", kairov1alpha1.UserAuthentication{Type: kairov1alpha1.UserAuthenticationSCRAM,
			Password: &kairov1alpha1.PasswordSource{ValueFrom: kairov1alpha1.PasswordValueFrom{
				SecretKeyRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "bob-password"}, Key: "pw"}}}})
		carol := user("carol", kairov1alpha1.UserAuthentication{Type: kairov1alpha1.UserAuthenticationTLS})
		dave := user("dave", kairov1alpha1.UserAuthentication{Type: kairov1alpha1.UserAuthenticationSCRAM,
			Password: &kairov1alpha1.PasswordSource{ValueFrom: kairov1alpha1.PasswordValueFrom{
				SecretKeyRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "nowhere"}, Key: "pw"}}}})

		Eventually(func(g Gomega) {
			s := secretOf(ns, "alice")(g)
			g.Expect(metav1.IsControlledBy(s, alice)).To(BeTrue())
			g.Expect(s.Data["password"]).To(HaveLen(32))
			g.Expect(string(s.Data["sasl.jaas.config"])).To(ContainSubstring(`username="alice" password="` + string(s.Data["password"]) + `"`))
			got := get(alice)
			g.Expect(got.Status.Username).To(Equal("alice"))
			g.Expect(got.Status.Secret).To(Equal("alice"))
			// This cluster has no brokers: the credentials are written,
			// the user is not on any broker, and Ready says so.
			g.Expect(condition(got.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonClusterNotReady))
			g.Expect(got.Finalizers).To(ContainElement(kairov1alpha1.FinalizerName))

			g.Expect(string(secretOf(ns, "bob")(g).Data["password"])).To(Equal("bobs own password"))
			g.Expect(metav1.IsControlledBy(secretOf(ns, "bob")(g), bob)).To(BeTrue())

			cs := secretOf(ns, "carol")(g)
			cert := certsOf(g, cs.Data["user.crt"])[0]
			g.Expect(cert.Subject.CommonName).To(Equal("carol"))
			g.Expect(pki.Role(cert)).To(Equal(pki.OrgUser))
			roots := x509.NewCertPool()
			for _, ca := range certsOf(g, cs.Data["ca.crt"]) {
				roots.AddCert(ca)
			}
			_, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
			g.Expect(err).NotTo(HaveOccurred())
			_, p12Cert, _, err := pkcs12.DecodeChain(cs.Data["user.p12"], string(cs.Data["user.password"]))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p12Cert.Equal(cert)).To(BeTrue())
			g.Expect(metav1.IsControlledBy(cs, carol)).To(BeTrue())

			g.Expect(condition(get(dave).Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionFalse, ReasonPasswordNotFound))
		}).WithTimeout(20 * time.Second).Should(Succeed())

		By("a generated password surviving a reconcile")
		var before []byte
		Eventually(func(g Gomega) { before = secretOf(ns, "alice")(g).Data["password"] }).Should(Succeed())
		Expect(update(alice, func(u *kairov1alpha1.KairoUser) {
			u.Spec.Authorization = &kairov1alpha1.UserAuthorization{ACLs: []kairov1alpha1.ACLRule{{
				Resource: kairov1alpha1.ACLResource{Type: "topic", Name: "orders"}, Operations: []kairov1alpha1.ACLOperation{"Read"}}}}
		})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(get(alice).Status.ObservedGeneration).To(Equal(get(alice).Generation))
		}).WithTimeout(10 * time.Second).Should(Succeed())
		Consistently(func(g Gomega) []byte { return secretOf(ns, "alice")(g).Data["password"] }).WithTimeout(3 * time.Second).
			Should(Equal(before))
	})

	It("refuses ACLs that do not apply to their resource type, and reserved names", func() {
		for _, tc := range []struct {
			name string
			u    kairov1alpha1.KairoUser
			msg  string
		}{
			{"group write", kairov1alpha1.KairoUser{ObjectMeta: metav1.ObjectMeta{Name: "gw"}, Spec: kairov1alpha1.KairoUserSpec{
				Authentication: kairov1alpha1.UserAuthentication{Type: "scram-sha-512"},
				Authorization: &kairov1alpha1.UserAuthorization{ACLs: []kairov1alpha1.ACLRule{{
					Resource: kairov1alpha1.ACLResource{Type: "group", Name: "g"}, Operations: []kairov1alpha1.ACLOperation{"Write"}}}}}},
				"a group ACL takes Read, Describe, Delete or All"},
			{"cluster read", kairov1alpha1.KairoUser{ObjectMeta: metav1.ObjectMeta{Name: "cr"}, Spec: kairov1alpha1.KairoUserSpec{
				Authentication: kairov1alpha1.UserAuthentication{Type: "scram-sha-512"},
				Authorization: &kairov1alpha1.UserAuthorization{ACLs: []kairov1alpha1.ACLRule{{
					Resource: kairov1alpha1.ACLResource{Type: "cluster"}, Operations: []kairov1alpha1.ACLOperation{"Read"}}}}}},
				"a cluster ACL takes"},
			{"topic without a name", kairov1alpha1.KairoUser{ObjectMeta: metav1.ObjectMeta{Name: "tn"}, Spec: kairov1alpha1.KairoUserSpec{
				Authentication: kairov1alpha1.UserAuthentication{Type: "scram-sha-512"},
				Authorization: &kairov1alpha1.UserAuthorization{ACLs: []kairov1alpha1.ACLRule{{
					Resource: kairov1alpha1.ACLResource{Type: "topic"}, Operations: []kairov1alpha1.ACLOperation{"Read"}}}}}},
				"needs a name"},
			{"tls with a password", kairov1alpha1.KairoUser{ObjectMeta: metav1.ObjectMeta{Name: "tp"}, Spec: kairov1alpha1.KairoUserSpec{
				Authentication: kairov1alpha1.UserAuthentication{Type: "tls", Password: &kairov1alpha1.PasswordSource{
					ValueFrom: kairov1alpha1.PasswordValueFrom{SecretKeyRef: corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "x"}, Key: "y"}}}}}},
				"password applies to scram-sha-512 only"},
			{"reserved name", kairov1alpha1.KairoUser{ObjectMeta: metav1.ObjectMeta{Name: "kairolog-operator"}, Spec: kairov1alpha1.KairoUserSpec{
				Authentication: kairov1alpha1.UserAuthentication{Type: "tls"}}},
				"reserved"},
		} {
			u := tc.u
			u.Namespace = ns
			u.Spec.ClusterRef = kairov1alpha1.ClusterReference{Name: "users"}
			err := k8sClient.Create(ctx, &u)
			Expect(err).To(MatchError(ContainSubstring(tc.msg)), tc.name)
		}
	})
})
