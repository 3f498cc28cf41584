package localcluster

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"slices"
	"testing"
)

func TestClusterPKI(t *testing.T) {
	nodeIP, svcIP := net.ParseIP("127.0.42.1"), net.ParseIP("127.1.42.1")
	p, err := newClusterPKI(t.TempDir(), "kairo-local", nodeIP, svcIP)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(p.ca.certPEM)
	load := func(certPath string) *x509.Certificate {
		t.Helper()
		b, err := os.ReadFile(certPath)
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(b)
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	// In-cluster clients reach kube-apiserver through the kubernetes Service
	// address and name; the certificate must cover them.
	api := load(p.apiserverCert)
	for _, host := range []string{"127.1.42.1", "127.0.42.1", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"} {
		if err := api.VerifyHostname(host); err != nil {
			t.Errorf("apiserver certificate: %v", err)
		}
	}
	if _, err := api.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("apiserver certificate does not chain to the CA: %v", err)
	}

	// Client identities are what kube-apiserver's bootstrap RBAC and the
	// Node authorizer expect.
	for _, tc := range []struct {
		kp     keyPair
		cn     string
		groups []string
	}{
		{p.node, "system:node:kairo-local", []string{"system:nodes"}},
		{p.controllerManager, "system:kube-controller-manager", nil},
		{p.scheduler, "system:kube-scheduler", nil},
		{p.admin, adminUser, []string{"system:masters"}},
	} {
		pair, err := tls.X509KeyPair(tc.kp.certPEM, tc.kp.keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := x509.ParseCertificate(pair.Certificate[0])
		if c.Subject.CommonName != tc.cn || !slices.Equal(c.Subject.Organization, tc.groups) {
			t.Errorf("client %s/%v, want %s/%v", c.Subject.CommonName, c.Subject.Organization, tc.cn, tc.groups)
		}
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s: %v", tc.cn, err)
		}
	}
	kubelet, _ := tls.X509KeyPair(p.kubeletServing.certPEM, p.kubeletServing.keyPEM)
	kc, _ := x509.ParseCertificate(kubelet.Certificate[0])
	if err := kc.VerifyHostname("127.0.42.1"); err != nil {
		t.Errorf("kubelet serving certificate: %v", err)
	}
	if info, err := os.Stat(p.saPrivate); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("service-account signing key: %v, mode %v", err, info.Mode().Perm())
	}
}
