package e2e

import (
	"context"
	"crypto/x509"
	"fmt"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/controllers/resources"
	"github.com/kairolog/kairolog/internal/pki"
)

// kcatSASL are the kcat flags of docs/security.md's SASL_SSL client: the
// gateway's forwarded address, SCRAM-SHA-512 as user, the cluster's CA.
func kcatSASL(addr, caFile, user, password string) []string {
	return []string{"-b", addr,
		"-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=SCRAM-SHA-512",
		"-X", "sasl.username=" + user, "-X", "sasl.password=" + password,
		"-X", "ssl.ca.location=" + caFile}
}

// secureKcat: kcat over SASL_SSL through the gateway produces and
// consumes, the records are the ones the HTTP API holds, and a wrong
// password is an authentication failure.
func secureKcat(ctx context.Context, gwAddr, caFile, writerBase, writerPassword string) {
	GinkgoHelper()
	sasl := kcatSASL(gwAddr, caFile, secWriter, writerPassword)
	var lines []string
	want := map[string]bool{"paid": true} // the curl record
	for i := range 30 {
		key, value := fmt.Sprintf("customer-%d", i%10), fmt.Sprintf("charge-%02d", i)
		lines = append(lines, key+":"+value)
		want[value] = true
	}
	kcat(ctx, strings.Join(lines, "\n")+"\n", append(sasl, "-t", secTopic, "-P", "-K", ":")...)
	read := parseKcat(kcat(ctx, "", append(sasl, "-C", "-t", secTopic, "-o", "beginning", "-e", "-q", "-f", kcatFormat)...))
	Expect(read).To(HaveLen(len(want)), "kcat reads every record once: %+v", read)
	seen := map[string]bool{}
	for _, r := range read {
		Expect(want).To(HaveKey(r.Value))
		Expect(seen).NotTo(HaveKey(r.Value), "%s read twice", r.Value)
		seen[r.Value] = true
	}

	// The HTTP API, as the writer, holds the same records at the same
	// offsets.
	var stored map[int32]map[int64]string
	Eventually(func() (err error) {
		stored, err = readPartitions(writerBase, secTopic, secPartitions)
		return err
	}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())
	n := 0
	for _, r := range read {
		Expect(stored[r.Partition]).To(HaveKeyWithValue(r.Offset, r.Value))
		n++
	}
	for _, recs := range stored {
		n -= len(recs)
	}
	Expect(n).To(BeZero(), "the HTTP API holds records kcat did not read: %v", stored)

	// A wrong password: SASL_AUTHENTICATION_FAILED, and kcat gets nothing.
	path, err := exec.LookPath("kcat")
	Expect(err).NotTo(HaveOccurred())
	out, err := run(ctx, "", path, append(kcatSASL(gwAddr, caFile, secWriter, "not-the-password"), "-L", "-m", "10")...)
	Expect(err).To(HaveOccurred(), "kcat -L with a wrong password: %s", out)
	Expect(err.Error()).To(ContainSubstring("Authentication failed"))
	say("kcat over SASL_SSL through the gateway: %d records produced and consumed; a wrong password is refused", len(read))
}

// caRenewalUnderProducer renews the cluster CA (kairolog.io/force-renew)
// while an acks=all producer runs over HTTPS holding the CA certificate
// read before the renewal. The renewal keeps the key, so the producer
// never needs the new certificate: it sees only the brokers' restarts.
// Every acknowledged record is read back once, and the brokers serve
// certificates issued under the renewed CA.
func caRenewalUnderProducer(ctx context.Context, writerBase, addr string, oldCA *x509.Certificate) {
	GinkgoHelper()
	key := client.ObjectKey{Namespace: secNS, Name: secCluster}
	kc := &kairov1alpha1.KairoCluster{}
	Expect(s.k8s.Get(ctx, key, kc)).To(Succeed())
	before := kc.Status.Security.DeepCopy()
	Expect(before.CertificatesNotAfter).NotTo(BeNil())
	sts := &appsv1.StatefulSet{}
	Expect(s.k8s.Get(ctx, key, sts)).To(Succeed())
	versionBefore := sts.Spec.Template.Annotations[resources.CertificatesAnnotation]

	monitor := watchReadiness(secNS, secCluster, 3)
	defer monitor.Stop()
	prod := startProducer(writerBase, secTopic, "s9")
	Eventually(func() int { return len(prod.Acked()) }).WithContext(ctx).WithTimeout(60*time.Second).
		Should(BeNumerically(">=", 30), func() string { return prod.Summary() })

	renewedAt := time.Now()
	mustKubectl(ctx, "-n", secNS, "annotate", "secret", secCluster+"-ca", resources.ForceRenewAnnotation+"=true")
	var renewed *x509.Certificate
	var version string
	Eventually(func(g Gomega) {
		ca := &corev1.Secret{}
		g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: secNS, Name: secCluster + "-ca"}, ca)).To(Succeed())
		g.Expect(ca.Annotations).NotTo(HaveKey(resources.ForceRenewAnnotation), "the operator has not renewed the CA")
		certs, err := pki.ParseCertificates(ca.Data["ca.crt"])
		g.Expect(err).NotTo(HaveOccurred())
		renewed = certs[0]
		g.Expect(pki.Fingerprint(renewed)).NotTo(Equal(pki.Fingerprint(oldCA)))
		g.Expect(pki.SameKey(renewed, oldCA)).To(BeTrue(), "the renewal replaced the CA's key")

		c := &kairov1alpha1.KairoCluster{}
		g.Expect(s.k8s.Get(ctx, key, c)).To(Succeed())
		st := c.Status.Security
		g.Expect(st.CANotAfter.Time).To(BeTemporally("==", renewed.NotAfter))
		g.Expect(st.CertificatesNotAfter.Time).To(BeTemporally(">", before.CertificatesNotAfter.Time),
			"status.security.certificatesNotAfter: the broker certificates are not reissued")
		g.Expect(conditionOf(c.Status.Conditions, "Progressing").Reason).To(Equal("UpToDate"))

		set := &appsv1.StatefulSet{}
		g.Expect(s.k8s.Get(ctx, key, set)).To(Succeed())
		version = set.Spec.Template.Annotations[resources.CertificatesAnnotation]
		g.Expect(version).NotTo(Equal(versionBefore))
		pods := &corev1.PodList{}
		g.Expect(s.k8s.List(ctx, pods, client.InNamespace(secNS), client.MatchingLabels{
			"app.kubernetes.io/instance": secCluster, "app.kubernetes.io/component": "broker"})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(3))
		for _, p := range pods.Items {
			g.Expect(p.Annotations[resources.CertificatesAnnotation]).To(Equal(version), "pod %s runs the renewed certificates", p.Name)
			g.Expect(podReady(&p)).To(BeTrue(), "pod %s", p.Name)
		}
		g.Expect(monitor.Replaced()).To(HaveLen(3), "every broker pod is restarted")
	}).WithContext(ctx).WithTimeout(5*time.Minute).WithPolling(2*time.Second).Should(Succeed(),
		func() string {
			return "producer: " + prod.Summary() + "\nreadiness timeline:\n" + monitor.Transitions()
		})
	waitClusterReadyIn(ctx, secNS, secCluster, 3, 2*time.Minute)
	rolled := time.Now()
	maxDown, _, _ := monitor.MaxDown()
	Expect(maxDown).To(Equal(1), "the brokers restart one at a time:\n%s", monitor.Transitions())

	// Through the forward, with only the CA certificate read before the
	// renewal: a broker certificate issued under the renewed one.
	old := x509.NewCertPool()
	old.AddCert(oldCA)
	var served *x509.Certificate
	Eventually(func() (err error) {
		served, err = servedCertificate(addr, old)
		return err
	}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())
	Expect(pki.IssuedBy(served, renewed)).To(BeTrue(), "served certificate %s (from %s) is not the renewed CA's",
		served.Subject.CommonName, served.NotBefore)

	Eventually(func() int { return prod.AckedSince(rolled) }).WithContext(ctx).WithTimeout(60*time.Second).
		Should(BeNumerically(">=", 20), func() string { return prod.Summary() })
	prod.Stop()
	summary := prod.Summary()
	say("CA renewal under the producer: %s; %d acknowledged since the renewal; the roll took %s; readiness timeline:\n%s",
		summary, prod.AckedSince(renewedAt), rolled.Sub(renewedAt).Round(100*time.Millisecond), monitor.Transitions())
	Expect(summary).NotTo(ContainSubstring("x509"), "the producer holding the old ca.crt stopped trusting the brokers")
	expectAllAcked(ctx, writerBase, secTopic, prod.Acked())
}

// deleteSecuredCluster deletes the users, the topic and the cluster; the
// cluster's certificate Secrets go with it (owner references, the real
// garbage collector), then the namespace.
func deleteSecuredCluster(ctx context.Context) {
	GinkgoHelper()
	mustKubectl(ctx, "-n", secNS, "delete", "ku", secWriter, secReader, "--timeout=60s")
	mustKubectl(ctx, "-n", secNS, "delete", "kt", secTopic, "--timeout=120s")
	mustKubectl(ctx, "-n", secNS, "delete", "kc", secCluster, "--timeout=120s")
	Eventually(func(g Gomega) {
		for _, name := range []string{secCluster + "-ca", secCluster + "-ca-cert", secCluster + "-broker-certs",
			secCluster + "-operator-cert", secWriter, secReader} {
			err := s.k8s.Get(ctx, client.ObjectKey{Namespace: secNS, Name: name}, &corev1.Secret{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Secret %s: %v", name, err)
		}
	}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	mustKubectl(ctx, "delete", "namespace", secNS, "--timeout=180s")
	Eventually(func() bool {
		return apierrors.IsNotFound(s.k8s.Get(ctx, client.ObjectKey{Name: secNS}, &corev1.Namespace{}))
	}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(BeTrue())
}
