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

// TestRenewKeepsKey: a renewed CA keeps its key and subject, so a
// certificate issued under the renewed certificate verifies against the
// old one alone (a client that still holds the old ca.crt), and IssuedBy
// still tells which of the two certificates a leaf was issued under.
func TestRenewKeepsKey(t *testing.T) {
	now := time.Now()
	old := newCA(t, now.Add(-time.Hour))
	before, err := old.Issue(LeafSpec{CommonName: "kairo-0", Organization: OrgBroker,
		DNSNames: []string{"localhost"}, Server: true}, now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// In the same second as the last certificate of the old one.
	renewed, err := old.Renew(now.Add(-time.Hour), now.Add(48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if Fingerprint(renewed.Cert) == Fingerprint(old.Cert) || !renewed.Cert.NotAfter.After(old.Cert.NotAfter) {
		t.Fatalf("the renewed certificate is not a new one: expires %v", renewed.Cert.NotAfter)
	}
	if !SameKey(renewed.Cert, old.Cert) || string(renewed.KeyPEM) != string(old.KeyPEM) {
		t.Fatal("the renewal changed the key")
	}
	if _, err := ParseAuthority(renewed.CertPEM, renewed.KeyPEM); err != nil {
		t.Fatalf("the renewed CA does not parse with its key: %v", err)
	}
	after, err := renewed.Issue(LeafSpec{CommonName: "kairo-0", Organization: OrgBroker,
		DNSNames: []string{"localhost"}, Server: true, NotAfter: now.Add(36 * time.Hour)}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		leaf, root *x509.Certificate
	}{
		{"new leaf, old root", after.Cert, old.Cert},
		{"old leaf, new root", before.Cert, renewed.Cert},
	} {
		roots := x509.NewCertPool()
		roots.AddCert(tc.root)
		if _, err := tc.leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: roots, CurrentTime: now,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	for _, tc := range []struct {
		name string
		leaf *x509.Certificate
		ca   *Authority
		want bool
	}{
		{"old leaf under the old certificate", before.Cert, old, true},
		{"old leaf under the renewed certificate", before.Cert, renewed, false},
		{"new leaf under the renewed certificate", after.Cert, renewed, true},
		{"new leaf under the old certificate", after.Cert, old, false},
	} {
		if got := tc.ca.Signed(tc.leaf); got != tc.want {
			t.Errorf("%s: Signed = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestIssueNeverPredatesCA: a CA made a moment ago (a user's, without a
// backdated start) issues certificates that start when it does, so that
// IssuedBy counts them as its own.
func TestIssueNeverPredatesCA(t *testing.T) {
	now := time.Now()
	ca := newCA(t, now.Add(backdate)) // starts at now
	kp, err := ca.Issue(LeafSpec{CommonName: "alice", Organization: OrgUser, Client: true}, now)
	if err != nil {
		t.Fatal(err)
	}
	if kp.Cert.NotBefore.Before(ca.Cert.NotBefore) || !ca.Signed(kp.Cert) {
		t.Errorf("leaf starts %v, its CA %v", kp.Cert.NotBefore, ca.Cert.NotBefore)
	}
}
