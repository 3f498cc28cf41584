package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kairolog/kairolog/internal/heldport"
	"github.com/kairolog/kairolog/internal/pki"
)

// A KairoCluster with spec.security on, used as docs/security.md tells a
// user: HTTPS with HTTP Basic against the users' SCRAM credentials and
// ACLs, checked with curl; the Kafka gateway over TLS with SASL
// SCRAM-SHA-512, checked with kcat; and a CA renewal under an acks=all
// producer that holds the CA certificate it read before the renewal.

const (
	secNS         = "secure"
	secCluster    = "kairo"
	secTopic      = "payments"
	secPartitions = 3
	// secWriter may write and read the topic; secReader only read it.
	secWriter = "billing"
	secReader = "auditor"
)

// secClusterManifest is a three-broker cluster with every client listener
// it serves here protected; the gateway advertises localhost:<gatewayPort>,
// the local port of the forward.
func secClusterManifest(gatewayPort int) string {
	return fmt.Sprintf(`apiVersion: kairolog.io/v1alpha1
kind: KairoCluster
metadata:
  name: kairo
spec:
  replicas: 3
  storage:
    size: 1Gi
  config:
    default.replication.factor: "3"
    min.insync.replicas: "2"
  service:
    kafkaGatewayPort: %d
  security:
    listeners:
      http: {tls: true, authentication: scram-sha-512}
      gateway: {tls: true, authentication: scram-sha-512}
    authorization: {enabled: true}
`, gatewayPort)
}

const secTopicManifest = `apiVersion: kairolog.io/v1alpha1
kind: Topic
metadata:
  name: payments
spec:
  clusterRef:
    name: kairo
  partitions: 3
  replicas: 3
  config:
    min.insync.replicas: "2"
`

const secUsersManifest = `apiVersion: kairolog.io/v1alpha1
kind: KairoUser
metadata:
  name: billing
spec:
  clusterRef: {name: kairo}
  authentication: {type: scram-sha-512}
  authorization:
    acls:
    - resource: {type: topic, name: payments}
      operations: [Write, Read, Describe]
---
apiVersion: kairolog.io/v1alpha1
kind: KairoUser
metadata:
  name: auditor
spec:
  clusterRef: {name: kairo}
  authentication: {type: scram-sha-512}
  authorization:
    acls:
    - resource: {type: topic, name: payments}
      operations: [Read]
`

// securedCluster is the scenario; it leaves nothing behind (its namespace
// is deleted), so the scenarios after it see what they saw before.
func securedCluster(ctx context.Context) {
	GinkgoHelper()
	dir := filepath.Join(s.workDir, "secure")
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())

	// The gateway's port is the forward's local port (it advertises
	// localhost:<kafkaGatewayPort>): held from now on, for kubectl.
	gwHeld, err := heldport.Hold("127.0.0.1")
	Expect(err).NotTo(HaveOccurred())
	gwPort := gwHeld.Port()
	mustKubectl(ctx, "create", "namespace", secNS)
	Expect(kubectlApply(ctx, secNS, secClusterManifest(gwPort))).To(Succeed())
	Expect(kubectlApply(ctx, secNS, secTopicManifest)).To(Succeed())
	Expect(kubectlApply(ctx, secNS, secUsersManifest)).To(Succeed())

	kc := waitClusterReadyIn(ctx, secNS, secCluster, 3, 4*time.Minute)
	mustKubectl(ctx, "-n", secNS, "wait", "kt/"+secTopic, "--for=condition=Ready", "--timeout=120s")
	mustKubectl(ctx, "-n", secNS, "wait", "ku/"+secWriter, "ku/"+secReader, "--for=condition=Ready", "--timeout=120s")
	Expect(kc.Status.Security).NotTo(BeNil())
	Expect(kc.Status.Security.CASecret).To(Equal(secCluster + "-ca-cert"))

	// What a user is told to take: the public CA bundle and the users'
	// generated passwords.
	caPEM := secretData(ctx, kc.Status.Security.CASecret, "ca.crt")
	caFile := filepath.Join(dir, "ca.crt")
	Expect(os.WriteFile(caFile, caPEM, 0o644)).To(Succeed())
	oldCAs, err := pki.ParseCertificates(caPEM)
	Expect(err).NotTo(HaveOccurred())
	Expect(oldCAs).To(HaveLen(1))
	pool := x509.NewCertPool()
	pool.AddCert(oldCAs[0])
	writerPassword := string(secretData(ctx, secWriter, "password"))
	readerPassword := string(secretData(ctx, secReader, "password"))
	hideInLogs(writerPassword)
	hideInLogs(url.PathEscape(writerPassword))
	hideInLogs(readerPassword)
	Expect(writerPassword).To(HaveLen(32))

	// HTTPS through kubectl port-forward of the client Service. The
	// suite's HTTP helpers trust this CA for this address from now on.
	httpHeld, err := heldport.Hold("127.0.0.1")
	Expect(err).NotTo(HaveOccurred())
	addr := "localhost:" + strconv.Itoa(httpHeld.Port())
	registerTLSClient(addr, pool)
	defer unregisterTLSClient(addr)
	health := func(base string) error {
		_, err := httpGetTimeout(base+"/health", 2*time.Second)
		return err
	}
	pf := startPortForwardHeld(secNS, "svc/"+secCluster, httpHeld, 8080, "https://"+addr, health, health)
	defer pf.Stop()
	secureHTTP(ctx, pf.URL(), caFile, writerPassword, readerPassword)

	// kcat through kubectl port-forward of the Kafka gateway: TLS, SASL
	// SCRAM-SHA-512.
	tlsUp := func(base string) error { return tlsHandshake(base, pool) }
	gw := startPortForwardHeld(secNS, "svc/"+secCluster, gwHeld, gwPort, "localhost:"+strconv.Itoa(gwPort), tlsUp, tlsUp)
	writerBase := fmt.Sprintf("https://%s:%s@%s", secWriter, url.PathEscape(writerPassword), addr)
	secureKcat(ctx, gw.URL(), caFile, writerBase, writerPassword)
	gw.Stop()

	caRenewalUnderProducer(ctx, writerBase, addr, oldCAs[0])

	pf.Stop()
	deleteSecuredCluster(ctx)
}

// secretData is one key of a Secret of the scenario's namespace.
func secretData(ctx context.Context, name, key string) []byte {
	GinkgoHelper()
	sec := &corev1.Secret{}
	Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: secNS, Name: name}, sec)).To(Succeed())
	Expect(sec.Data).To(HaveKey(key), "Secret %s", name)
	return sec.Data[key]
}

func registerTLSClient(addr string, roots *x509.CertPool) {
	tlsClientsMu.Lock()
	defer tlsClientsMu.Unlock()
	tlsClients[addr] = &http.Client{Timeout: 40 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
}

func unregisterTLSClient(addr string) {
	tlsClientsMu.Lock()
	defer tlsClientsMu.Unlock()
	delete(tlsClients, addr)
}

// tlsHandshake completes a TLS handshake with addr, verifying its
// certificate for localhost against roots, and returns the certificate.
func tlsHandshake(addr string, roots *x509.CertPool) error {
	_, err := servedCertificate(addr, roots)
	return err
}

func servedCertificate(addr string, roots *x509.CertPool) (*x509.Certificate, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr,
		&tls.Config{RootCAs: roots, ServerName: "localhost", MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// curlReply is what `curl -i` printed: the status, the headers and the
// body.
type curlReply struct {
	Status int
	Header http.Header
	Body   string
}

// curl runs curl with args; a reply of any status is a reply.
func curl(ctx context.Context, args ...string) curlReply {
	GinkgoHelper()
	path, err := exec.LookPath("curl")
	Expect(err).NotTo(HaveOccurred(), "curl is not installed (apt-get install -y curl; .ci/run does)")
	out, err := run(ctx, "", path, append([]string{"-sS", "-i", "--http1.1"}, args...)...)
	Expect(err).NotTo(HaveOccurred())
	head, body, ok := strings.Cut(out, "\r\n\r\n")
	Expect(ok).To(BeTrue(), "curl -i printed no header block: %q", out)
	lines := strings.Split(head, "\r\n")
	f := strings.Fields(lines[0])
	Expect(len(f)).To(BeNumerically(">=", 2), "status line %q", lines[0])
	status, err := strconv.Atoi(f[1])
	Expect(err).NotTo(HaveOccurred(), "status line %q", lines[0])
	h := http.Header{}
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ":"); ok {
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return curlReply{Status: status, Header: h, Body: body}
}

// secureHTTP: curl with the CA and a user's password produces; a user with
// only Read is refused a produce and allowed a fetch; no or bad
// credentials are 401 with a challenge; no CA is a TLS failure.
func secureHTTP(ctx context.Context, base, caFile, writerPassword, readerPassword string) {
	GinkgoHelper()
	u, err := url.Parse(base)
	Expect(err).NotTo(HaveOccurred())
	endpoint := "https://" + u.Host
	const record = `{"topic":"payments","key":"invoice-1","value":"paid","acks":"all"}`
	jsonBody := []string{"-H", "Content-Type: application/json", "-d", record}

	// curl --cacert ca.crt -u billing:<password> -d '…' https://localhost:<port>/produce
	r := curl(ctx, append([]string{"--cacert", caFile, "-u", secWriter + ":" + writerPassword}, append(jsonBody, endpoint+"/produce")...)...)
	Expect(r.Status).To(Equal(http.StatusOK), "body %s", r.Body)
	var reply produceReply
	Expect(json.Unmarshal([]byte(r.Body), &reply)).To(Succeed())
	Expect(reply.Status).To(Equal("stored"))
	Expect(reply.Partition).NotTo(BeNil())
	Expect(reply.Offset).NotTo(BeNil())
	say("curl as %s: stored at partition %d offset %d", secWriter, *reply.Partition, *reply.Offset)

	// The reader may fetch it, not produce.
	r = curl(ctx, append([]string{"--cacert", caFile, "-u", secReader + ":" + readerPassword}, append(jsonBody, endpoint+"/produce")...)...)
	Expect(r.Status).To(Equal(http.StatusForbidden), "body %s", r.Body)
	var apiErr apiError
	Expect(json.Unmarshal([]byte(r.Body), &apiErr)).To(Succeed(), "body %s", r.Body)
	Expect(apiErr.Code).To(Equal("TOPIC_AUTHORIZATION_FAILED"))
	Expect(apiErr.Msg).To(ContainSubstring(secReader))
	fetchURL := fmt.Sprintf("%s/fetch?topic=%s&partition=%d&offset=%d", endpoint, secTopic, *reply.Partition, *reply.Offset)
	r = curl(ctx, "--cacert", caFile, "-u", secReader+":"+readerPassword, fetchURL)
	Expect(r.Status).To(Equal(http.StatusOK), "body %s", r.Body)
	var f fetchReply
	Expect(json.Unmarshal([]byte(r.Body), &f)).To(Succeed())
	Expect(f.Records).NotTo(BeEmpty(), "acks=all: the record is below the high watermark when acknowledged")
	Expect(f.Records[0]).To(Equal(fetchedRecord{Offset: *reply.Offset, Message: "paid", Key: "invoice-1"}))

	// No credentials, and a wrong password: 401 with the Basic challenge.
	for _, creds := range [][]string{nil, {"-u", secWriter + ":not-the-password"}} {
		args := append([]string{"--cacert", caFile}, creds...)
		r = curl(ctx, append(args, append(jsonBody, endpoint+"/produce")...)...)
		Expect(r.Status).To(Equal(http.StatusUnauthorized), "credentials %v: body %s", creds, r.Body)
		Expect(r.Header.Get("WWW-Authenticate")).To(HavePrefix(`Basic realm="kairolog"`))
		apiErr = apiError{}
		Expect(json.Unmarshal([]byte(r.Body), &apiErr)).To(Succeed(), "body %s", r.Body)
		Expect(apiErr.Code).To(Equal("UNAUTHENTICATED"))
	}

	// Without the cluster's CA curl does not trust the brokers (exit 60).
	path, err := exec.LookPath("curl")
	Expect(err).NotTo(HaveOccurred())
	_, err = run(ctx, "", path, "-sS", endpoint+"/health")
	var exit *exec.ExitError
	Expect(errors.As(err, &exit)).To(BeTrue(), "curl without the CA: %v", err)
	Expect(exit.ExitCode()).To(Equal(60), "curl without the CA (60: the peer's certificate is not trusted): %v", err)
}
