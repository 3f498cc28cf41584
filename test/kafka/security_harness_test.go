package kafka

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kairolog/kairolog/internal/brokertest"
	"github.com/kairolog/kairolog/internal/pki"
)

// securePKI is a test cluster CA and the files brokers and kcat read.
type securePKI struct {
	ca  *pki.Authority
	dir string
	// roots trusts the CA.
	roots *x509.CertPool
	// caFile, brokerCert and brokerKey are the --tls-* files.
	caFile, brokerCert, brokerKey string
}

func newSecurePKI(t testing.TB) *securePKI {
	t.Helper()
	now := time.Now()
	ca, err := pki.NewAuthority("kafka security test CA", now, now.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	p := &securePKI{ca: ca, dir: t.TempDir(), roots: x509.NewCertPool()}
	p.roots.AddCert(ca.Cert)
	// One broker certificate for every loopback address brokertest hands
	// out, and localhost.
	var ips []net.IP
	for i := 1; i < 255; i++ {
		ips = append(ips, net.IPv4(127, 0, 0, byte(i)))
	}
	kp, err := ca.Issue(pki.LeafSpec{CommonName: "kairo-broker", Organization: pki.OrgBroker, DNSNames: []string{"localhost"},
		IPs: ips, Server: true, Client: true}, now)
	if err != nil {
		t.Fatal(err)
	}
	p.caFile, p.brokerCert, p.brokerKey = p.write(t, "ca.crt", ca.CertPEM), p.write(t, "broker.crt", kp.CertPEM), p.write(t, "broker.key", kp.KeyPEM)
	return p
}

func (p *securePKI) write(t testing.TB, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// issue is a client certificate of the CA: a user's (organization
// kairolog-user) or the operator's.
func (p *securePKI) issue(t testing.TB, commonName, org string) tls.Certificate {
	t.Helper()
	kp, err := p.ca.Issue(pki.LeafSpec{CommonName: commonName, Organization: org, Client: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	p.write(t, commonName+".crt", kp.CertPEM)
	p.write(t, commonName+".key", kp.KeyPEM)
	return cert
}

// clientTLS trusts the CA and presents certs.
func (p *securePKI) clientTLS(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{RootCAs: p.roots, Certificates: certs, MinVersion: tls.VersionTLS12}
}

// authorizationFlags turn authorization on with "root" a superuser.
var authorizationFlags = []string{"--authorization", "--super-users", "root"}

// tlsFlags are the --tls-* flags of every broker.
func (p *securePKI) tlsFlags() []string {
	return []string{"--tls-cert-file", p.brokerCert, "--tls-key-file", p.brokerKey, "--tls-ca-file", p.caFile}
}

// startSecureCluster starts n brokers with the CA's certificates and HTTP
// on TLS, and args(i) beyond that.
// The returned client holds the operator's certificate.
func startSecureCluster(t testing.TB, p *securePKI, n int, args func(i int) []string) (*brokertest.Cluster, *http.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts broker processes")
	}
	operator := p.clientTLS(p.issue(t, pki.OperatorName, pki.OrgOperator))
	c, err := brokertest.NewCluster(brokertest.Options{Brokers: n, HTTPTLS: operator, Args: func(i int) []string {
		return append(append(p.tlsFlags(), "--http-tls"), args(i)...)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i := 0; i < c.Len(); i++ {
				if b, err := os.ReadFile(c.LogFile(i)); err == nil {
					t.Logf("broker %d log:\n%s", i, tail(b, 30<<10))
				}
			}
		}
		c.Close()
	})
	if err := c.StartAll(); err != nil {
		t.Fatal(err)
	}
	ctx := testContextTB(t, 60*time.Second)
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return c, &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: operator}}
}

// putUser stores a user through the HTTP API as the operator.
func putUser(t testing.TB, c *brokertest.Cluster, operator *http.Client, name string, user map[string]any) {
	t.Helper()
	body, _ := json.Marshal(user)
	req, _ := http.NewRequest(http.MethodPut, c.Endpoint(0)+"/users/"+name, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := operator.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if raw, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT /users/%s: %d %s", name, resp.StatusCode, raw)
	}
}

// scramClient is a kgo client that logs in with SCRAM-SHA-512 over TLS.
func scramClient(t *testing.T, p *securePKI, seeds []string, user, password string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, seeds, append([]kgo.Opt{kgo.DialTLSConfig(p.clientTLS()),
		kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha512Mechanism())}, opts...)...)
}

// plainClient is a kgo client that logs in with SASL PLAIN over TLS.
func plainClient(t *testing.T, p *securePKI, seeds []string, user, password string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, seeds, append([]kgo.Opt{kgo.DialTLSConfig(p.clientTLS()),
		kgo.SASL(plain.Auth{User: user, Pass: password}.AsMechanism())}, opts...)...)
}

func testContextTB(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
