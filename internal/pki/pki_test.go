package pki

import (
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"
)

func newCA(t *testing.T, now time.Time) *Authority {
	t.Helper()
	ca, err := NewAuthority("test-ca", now, now.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// TestIssueVerifies: a broker certificate verifies against its CA for its
// names and both usages, carries its role, and never outlives the CA.
func TestIssueVerifies(t *testing.T) {
	now := time.Now()
	ca := newCA(t, now)
	kp, err := ca.Issue(LeafSpec{CommonName: "kairo-0", Organization: OrgBroker,
		DNSNames: []string{"kairo-0.kairo-headless.ns.svc", "localhost"}, Server: true, Client: true,
		NotAfter: now.Add(48 * time.Hour)}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !kp.Cert.NotAfter.Equal(ca.Cert.NotAfter) {
		t.Errorf("leaf expires %v, after its CA (%v)", kp.Cert.NotAfter, ca.Cert.NotAfter)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	for _, tc := range []struct {
		name  string
		usage x509.ExtKeyUsage
	}{
		{"localhost", x509.ExtKeyUsageServerAuth},
		{"kairo-0.kairo-headless.ns.svc", x509.ExtKeyUsageClientAuth},
	} {
		if _, err := kp.Cert.Verify(x509.VerifyOptions{DNSName: tc.name, Roots: roots,
			KeyUsages: []x509.ExtKeyUsage{tc.usage}}); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if !IsBroker(kp.Cert) || Role(kp.Cert) != OrgBroker {
		t.Errorf("role %q", Role(kp.Cert))
	}
	if !ca.Signed(kp.Cert) || newCA(t, now).Signed(kp.Cert) {
		t.Error("Signed does not tell its own CA from another")
	}
	user, err := ca.Issue(LeafSpec{CommonName: "alice", Organization: OrgUser, Client: true}, now)
	if err != nil {
		t.Fatal(err)
	}
	if IsBroker(user.Cert) {
		t.Error("a user certificate counts as a broker's")
	}
}

// TestParseAuthority: a CA round-trips through its PEM; a leaf, a key of
// another CA or garbage is refused with an error.
func TestParseAuthority(t *testing.T) {
	now := time.Now()
	ca := newCA(t, now)
	other := newCA(t, now)
	leaf, err := ca.Issue(LeafSpec{CommonName: "x", Client: true}, now)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseAuthority(ca.CertPEM, ca.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if Fingerprint(got.Cert) != Fingerprint(ca.Cert) {
		t.Fatal("parsed CA differs")
	}
	for _, tc := range []struct {
		name      string
		cert, key []byte
		want      error
	}{
		{"leaf", leaf.CertPEM, leaf.KeyPEM, ErrNotCA},
		{"other key", ca.CertPEM, other.KeyPEM, ErrNotCA},
		{"no certificate", []byte("hello"), ca.KeyPEM, ErrNoCertificate},
		{"no key", ca.CertPEM, ca.CertPEM, nil},
	} {
		_, err := ParseAuthority(tc.cert, tc.key)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestParseCertificatesBounds: a bundle of more certificates than a trust
// bundle ever holds is refused.
func TestParseCertificatesBounds(t *testing.T) {
	ca := newCA(t, time.Now())
	bundle := []byte(strings.Repeat(string(ca.CertPEM), MaxBundleCertificates+1))
	if _, err := ParseCertificates(bundle); err == nil {
		t.Fatal("an oversized bundle was accepted")
	}
	certs, err := ParseCertificates([]byte("comment\n" + string(ca.CertPEM) + string(ca.KeyPEM)))
	if err != nil || len(certs) != 1 {
		t.Fatalf("%d certificates, %v", len(certs), err)
	}
}

// FuzzParse feeds any bytes to the parsers a Secret's content reaches: an
// error is fine, a panic is not.
func FuzzParse(f *testing.F) {
	ca, err := NewAuthority("fuzz", time.Now(), time.Now().Add(time.Hour))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ca.CertPEM, ca.KeyPEM)
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), []byte("-----BEGIN PRIVATE KEY-----\n\n-----END PRIVATE KEY-----\n"))
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, certPEM, keyPEM []byte) {
		_, _ = ParseCertificates(certPEM)
		_, _ = ParseKey(keyPEM)
		if a, err := ParseAuthority(certPEM, keyPEM); err == nil && a.Cert == nil {
			t.Fatal("an authority without a certificate")
		}
	})
}
