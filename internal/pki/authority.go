package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Authority is a CA that signs certificates: its certificate and key.
type Authority struct {
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte
	KeyPEM  []byte
}

// KeyPair is a PEM-encoded certificate and its private key.
type KeyPair struct {
	CertPEM []byte
	KeyPEM  []byte
	Cert    *x509.Certificate
}

// LeafSpec describes a certificate to issue.
type LeafSpec struct {
	CommonName   string
	Organization string
	DNSNames     []string
	IPs          []net.IP
	// Server and Client set the extended key usages.
	Server, Client bool
	// NotAfter is when it expires; it is capped at the CA's own expiry.
	NotAfter time.Time
}

// backdate covers clocks a little behind the operator's.
const backdate = 5 * time.Minute

// NewAuthority is a new self-signed CA named commonName, valid from now
// until notAfter.
func NewAuthority(commonName string, now, notAfter time.Time) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          newSerial(),
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"kairolog.io"}},
		NotBefore:             now.Add(-backdate),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("pki: create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyPEM, err := EncodeKey(key)
	if err != nil {
		return nil, err
	}
	return &Authority{Cert: cert, Key: key, CertPEM: encodeCert(der), KeyPEM: keyPEM}, nil
}

// Renew is the authority with a new certificate of the same subject and
// the same key, valid from now until notAfter: what Strimzi's
// renew-certificate policy does. A certificate issued under the renewed
// one verifies against the old one too (same issuer name, same key, same
// subject key id), so a client that still holds the old ca.crt keeps
// trusting the brokers until the old certificate expires.
func (a *Authority) Renew(now, notAfter time.Time) (*Authority, error) {
	// Certificates carry whole seconds: the renewed one starts on the
	// second after every certificate issued under the old one so far, so
	// that IssuedBy never counts one of those as the renewed CA's.
	tmpl := &x509.Certificate{
		SerialNumber:          newSerial(),
		Subject:               a.Cert.Subject,
		SubjectKeyId:          a.Cert.SubjectKeyId,
		NotBefore:             now.Add(-backdate).Truncate(time.Second).Add(time.Second),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, a.Key.Public(), a.Key)
	if err != nil {
		return nil, fmt.Errorf("pki: renew CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Authority{Cert: cert, Key: a.Key, CertPEM: encodeCert(der), KeyPEM: a.KeyPEM}, nil
}

// SameKey reports whether two certificates carry the same public key.
func SameKey(a, b *x509.Certificate) bool { return samePublicKey(a.PublicKey, b.PublicKey) }

// ErrNotCA is a certificate that cannot sign others, or a key that is not
// the certificate's.
var ErrNotCA = errors.New("not a usable CA")

// ParseAuthority reads a CA from its PEM certificate and key: the first
// certificate of certPEM must be a CA whose public key is key's.
func ParseAuthority(certPEM, keyPEM []byte) (*Authority, error) {
	certs, err := ParseCertificates(certPEM)
	if err != nil {
		return nil, err
	}
	cert := certs[0]
	if !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 && cert.KeyUsage != 0 {
		return nil, fmt.Errorf("%w: %q is not a CA certificate", ErrNotCA, cert.Subject.CommonName)
	}
	key, err := ParseKey(keyPEM)
	if err != nil {
		return nil, err
	}
	if !samePublicKey(cert.PublicKey, key.Public()) {
		return nil, fmt.Errorf("%w: the key does not belong to certificate %q", ErrNotCA, cert.Subject.CommonName)
	}
	return &Authority{Cert: cert, Key: key, CertPEM: encodeCert(cert.Raw), KeyPEM: keyPEM}, nil
}

func samePublicKey(a, b crypto.PublicKey) bool {
	ka, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && ka.Equal(b)
}

// Issue signs a new certificate with a new key for spec.
func (a *Authority) Issue(spec LeafSpec, now time.Time) (KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return KeyPair{}, err
	}
	notAfter := spec.NotAfter
	if notAfter.IsZero() || notAfter.After(a.Cert.NotAfter) {
		notAfter = a.Cert.NotAfter
	}
	// A certificate never predates its CA's: IssuedBy tells a renewed
	// CA's certificates from its predecessor's by their validity.
	notBefore := now.Add(-backdate)
	if notBefore.Before(a.Cert.NotBefore) {
		notBefore = a.Cert.NotBefore
	}
	tmpl := &x509.Certificate{
		SerialNumber: newSerial(),
		Subject:      pkix.Name{CommonName: spec.CommonName},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		DNSNames:     spec.DNSNames,
		IPAddresses:  spec.IPs,
	}
	if spec.Organization != "" {
		tmpl.Subject.Organization = []string{spec.Organization}
	}
	if spec.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if spec.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.Cert, key.Public(), a.Key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("pki: sign certificate for %q: %w", spec.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return KeyPair{}, err
	}
	keyPEM, err := EncodeKey(key)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{CertPEM: encodeCert(der), KeyPEM: keyPEM, Cert: cert}, nil
}

// Signed reports whether cert was issued under the authority's
// certificate (IssuedBy).
func (a *Authority) Signed(cert *x509.Certificate) bool { return IssuedBy(cert, a.Cert) }

// IssuedBy reports whether cert was issued under the CA certificate ca:
// signed by its key, within its validity. A renewed CA keeps its key, so
// the signature alone cannot tell its certificates from those issued
// under the certificate it replaced; their validity can, since Issue
// never lets a certificate start before or end after its CA's.
func IssuedBy(cert, ca *x509.Certificate) bool {
	return cert.CheckSignatureFrom(ca) == nil &&
		!cert.NotBefore.Before(ca.NotBefore) && !cert.NotAfter.After(ca.NotAfter)
}

// newSerial is a random 128-bit serial number, as RFC 5280 recommends.
func newSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}
