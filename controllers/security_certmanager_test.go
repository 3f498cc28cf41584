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
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/controllers/resources"
	"github.com/kairolog/kairolog/internal/pki"
)

// certManagerDir holds what `make cert-manager` builds: cert-manager's
// certificate controllers (hack/tools/cert-manager) and its CRDs.
var certManagerDir = filepath.Join("..", "bin", "cert-manager")

// startCertManager installs cert-manager's CRDs into the test API server
// and runs its certificate controllers against it until the suite ends.
func startCertManager() {
	GinkgoHelper()
	bin := filepath.Join(certManagerDir, "controller")
	if _, err := os.Stat(bin); err != nil {
		Fail(fmt.Sprintf("cert-manager's controller is not built at %s: run make cert-manager (make test does)", bin))
	}
	_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{filepath.Join(certManagerDir, "crds")},
		ErrorIfPathMissing: true})
	Expect(err).NotTo(HaveOccurred())

	user, err := testEnv.AddUser(envtest.User{Name: "cert-manager", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	kubeconfig, err := user.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	work := GinkgoT().TempDir()
	kubeconfigPath := filepath.Join(work, "kubeconfig")
	Expect(os.WriteFile(kubeconfigPath, kubeconfig, 0o600)).To(Succeed())
	logFile, err := os.Create(filepath.Join(work, "cert-manager.log"))
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(bin, "--kubeconfig="+kubeconfigPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	Expect(cmd.Start()).To(Succeed())
	fmt.Fprintf(GinkgoWriter, "cert-manager controller pid %d, log %s\n", cmd.Process.Pid, logFile.Name())
	DeferCleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logFile.Close()
	})
}

// certManagerObject is a cert-manager.io/v1 object of kind in ns.
func certManagerObject(kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cert-manager.io/v1", "kind": kind, "spec": spec}}
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// servedCertificate is the certificate broker presents to a client that
// trusts roots, by the name of the client Service.
func servedCertificate(g Gomega, broker secureBroker, roots *x509.CertPool) *x509.Certificate {
	conn, err := tls.Dial("tcp", strings.TrimPrefix(broker.base, "https://"), &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots,
		ServerName: fmt.Sprintf("%s.%s.svc", broker.kc.Name, broker.kc.Namespace)})
	g.Expect(err).NotTo(HaveOccurred())
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

var _ = Describe("Certificates from a cert-manager Issuer", Ordered, func() {
	const ns = kcNamespacePrefix + "cert-manager"

	BeforeAll(func() {
		requireControllerManager()
		kcNamespace(ns)
		startCertManager()
	})

	It("issues, mounts and renews the brokers', the operator's and a user's certificates", func() {
		By("a self-signed Issuer signing a CA, and a CA Issuer of that CA")
		Expect(k8sClient.Create(ctx, certManagerObject("Issuer", ns, "selfsigned", map[string]any{"selfSigned": map[string]any{}}))).To(Succeed())
		Expect(k8sClient.Create(ctx, certManagerObject("Certificate", ns, "root", map[string]any{
			"isCA": true, "commonName": "kairolog test root", "secretName": "root-ca",
			"privateKey": map[string]any{"algorithm": "ECDSA", "size": int64(256)},
			"issuerRef":  map[string]any{"name": "selfsigned", "kind": "Issuer", "group": "cert-manager.io"},
		}))).To(Succeed())
		Expect(k8sClient.Create(ctx, certManagerObject("Issuer", ns, "ca", map[string]any{"ca": map[string]any{"secretName": "root-ca"}}))).
			To(Succeed())
		var root *x509.Certificate
		Eventually(func(g Gomega) { root = certsOf(g, secretOf(ns, "root-ca")(g).Data["tls.crt"])[0] }).
			WithTimeout(60 * time.Second).Should(Succeed())
		Expect(root.IsCA).To(BeTrue())
		roots := x509.NewCertPool()
		roots.AddCert(root)

		kc, broker, _ := secureBrokers(ns, "issued", 1, &kairov1alpha1.SecuritySpec{
			CA:            &kairov1alpha1.CertificateAuthoritySpec{IssuerRef: &kairov1alpha1.IssuerReference{Name: "ca"}},
			Listeners:     kairov1alpha1.ListenersSecurity{HTTP: &kairov1alpha1.ListenerSecurity{TLS: true, Authentication: kairov1alpha1.AuthenticationTLS}},
			Authorization: &kairov1alpha1.AuthorizationSpec{Enabled: true},
		}, nil)

		By("the broker certificate cert-manager wrote: every name a client or peer uses, signed by the Issuer's CA")
		brokerSecret := resources.BrokerTLSSecretName(kc, 0)
		var issued *x509.Certificate
		Eventually(func(g Gomega) {
			s := secretOf(ns, brokerSecret)(g)
			issued = certsOf(g, s.Data["tls.crt"])[0]
			g.Expect(certsOf(g, s.Data["ca.crt"])[0].Equal(root)).To(BeTrue())
			trust := certsOf(g, secretOf(ns, resources.CACertSecretName(kc))(g).Data["ca.crt"])
			g.Expect(trust).To(HaveLen(1))
			g.Expect(trust[0].Equal(root)).To(BeTrue(), "the trust bundle is the CA cert-manager put in ca.crt")
		}).WithTimeout(60 * time.Second).Should(Succeed())
		Expect(issued.DNSNames).To(ConsistOf(resources.BrokerDNSNames(kc, 0)))
		Expect(issued.DNSNames).To(ContainElements("issued-0.issued-headless."+ns+".svc", "issued."+ns+".svc", "localhost"))
		Expect(issued.Subject.CommonName).To(Equal("issued-0"))
		Expect(pki.Role(issued)).To(Equal(pki.OrgBroker))
		Expect(issued.CheckSignatureFrom(root)).To(Succeed())
		Expect(issued.ExtKeyUsage).To(ContainElements(x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth))
		cert := &unstructured.Unstructured{}
		cert.SetAPIVersion("cert-manager.io/v1")
		cert.SetKind("Certificate")
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: brokerSecret}, cert)).To(Succeed())
		Expect(metav1.IsControlledBy(cert, kc)).To(BeTrue(), "the Certificate is the cluster's, deleted with it")
		Eventually(func(g Gomega) []metav1.OwnerReference { return secretOf(ns, brokerSecret)(g).OwnerReferences }).
			Should(ContainElement(HaveField("UID", kc.UID)), "the Secret cert-manager wrote goes with the cluster too")
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: resources.BrokerCertsSecretName(kc)}, &corev1.Secret{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the operator issues no broker certificate of its own: %v", err)

		By("the broker serving TLS with it, and the operator reaching it with its own certificate from the Issuer: the cluster is Ready")
		Eventually(func(g Gomega) {
			g.Expect(condition(getCluster(client.ObjectKeyFromObject(kc)).Status.Conditions, kairov1alpha1.ConditionReady).Status).
				To(Equal(metav1.ConditionTrue))
			g.Expect(servedCertificate(g, broker, roots).Equal(issued)).To(BeTrue())
		}).WithTimeout(90 * time.Second).Should(Succeed())
		operator := certsOf(Default, secretOf(ns, resources.OperatorCertSecretName(kc))(Default).Data["tls.crt"])[0]
		Expect(pki.Role(operator)).To(Equal(pki.OrgOperator))
		Expect(operator.CheckSignatureFrom(root)).To(Succeed())
		Expect(broker.asOperator(http.MethodGet, "/brokers", nil).status).To(Equal(http.StatusOK))

		By("a tls KairoUser: its certificate from the Issuer, its principal its name on the broker")
		user := &kairov1alpha1.KairoUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "auditor"},
			Spec: kairov1alpha1.KairoUserSpec{ClusterRef: kairov1alpha1.ClusterReference{Name: kc.Name},
				Authentication: kairov1alpha1.UserAuthentication{Type: kairov1alpha1.UserAuthenticationTLS},
				Authorization: &kairov1alpha1.UserAuthorization{ACLs: []kairov1alpha1.ACLRule{{
					Resource: kairov1alpha1.ACLResource{Type: "cluster"}, Operations: []kairov1alpha1.ACLOperation{"Describe"}}}}}}
		Expect(k8sClient.Create(ctx, user)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(condition(get(user).Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, ReasonUserApplied))
		}).WithTimeout(60 * time.Second).Should(Succeed())
		userSecret := secretOf(ns, "auditor")(Default)
		userCert := certsOf(Default, userSecret.Data[UserCertKey])[0]
		Expect(userCert.Subject.CommonName).To(Equal("auditor"))
		Expect(pki.Role(userCert)).To(Equal(pki.OrgUser))
		Expect(userCert.CheckSignatureFrom(root)).To(Succeed())
		Expect(certsOf(Default, userSecret.Data["ca.crt"])[0].Equal(root)).To(BeTrue())
		Expect(userSecret.Data).To(HaveKey(UserP12Key))
		userKeyPair := broker.certOf("auditor", UserCertKey, UserKeyKey)
		Expect(broker.withCert(userKeyPair, http.MethodGet, "/brokers", nil).status).To(Equal(http.StatusOK))
		r := broker.withCert(userKeyPair, http.MethodPost, "/produce", map[string]any{"topic": "orders", "message": "hello"})
		Expect(r.status).To(Equal(http.StatusForbidden), string(r.body))
		Expect(r.code).To(Equal("TOPIC_AUTHORIZATION_FAILED"))
		Expect(broker.anonymous(http.MethodGet, "/brokers", nil).status).To(Equal(http.StatusUnauthorized))

		By("cert-manager renewing the broker certificate (as cmctl renew asks it): the broker serves the new one")
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: brokerSecret}, cert)).To(Succeed())
		conds, _, _ := unstructured.NestedSlice(cert.Object, "status", "conditions")
		conds = append(conds, map[string]any{"type": "Issuing", "status": "True", "reason": "ManuallyTriggered",
			"message": "renewal asked by the test", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)})
		Expect(unstructured.SetNestedSlice(cert.Object, conds, "status", "conditions")).To(Succeed())
		Expect(k8sClient.Status().Update(ctx, cert)).To(Succeed())
		var renewed *x509.Certificate
		Eventually(func(g Gomega) {
			renewed = certsOf(g, secretOf(ns, brokerSecret)(g).Data["tls.crt"])[0]
			g.Expect(renewed.SerialNumber).NotTo(Equal(issued.SerialNumber))
		}).WithTimeout(60 * time.Second).Should(Succeed())
		Expect(renewed.CheckSignatureFrom(root)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(servedCertificate(g, broker, roots).Equal(renewed)).To(BeTrue())
		}).WithTimeout(120*time.Second).Should(Succeed(), "the renewed certificate reaches the broker by a restart")
		expectEvent(ns, kc.Name, ReasonCertificatesRenewed)
		Eventually(func(g Gomega) {
			g.Expect(condition(getCluster(client.ObjectKeyFromObject(kc)).Status.Conditions, kairov1alpha1.ConditionReady).Status).
				To(Equal(metav1.ConditionTrue))
		}).WithTimeout(60 * time.Second).Should(Succeed())
		Expect(broker.asOperator(http.MethodGet, "/brokers", nil).status).To(Equal(http.StatusOK))

		By("deleting the user and the cluster deleting their Certificates and the Secrets cert-manager wrote")
		Expect(k8sClient.Delete(ctx, user)).To(Succeed())
		Expect(k8sClient.Delete(ctx, kc)).To(Succeed())
		for _, name := range []string{brokerSecret, resources.OperatorCertSecretName(kc), UserCertificateName(user)} {
			Eventually(func() bool {
				return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{}))
			}).WithTimeout(60*time.Second).Should(BeTrue(), "Secret %s", name)
		}
	})

	It("refuses an issuerRef next to a secretName", func() {
		kc := &kairov1alpha1.KairoCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "both"},
			Spec: kairov1alpha1.KairoClusterSpec{Replicas: 1, Security: &kairov1alpha1.SecuritySpec{CA: &kairov1alpha1.CertificateAuthoritySpec{
				SecretName: "my-ca", IssuerRef: &kairov1alpha1.IssuerReference{Name: "ca"}}}}}
		kc.Spec.Storage.Size.Set(1 << 30)
		err := k8sClient.Create(ctx, kc)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("issuerRef and secretName are mutually exclusive"))
	})
})
