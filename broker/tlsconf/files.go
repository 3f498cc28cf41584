package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/kairolog/kairolog/internal/pki"
)

// Files are the paths of a broker's certificate, its key and the CA
// bundle it trusts.
type Files struct {
	CertFile string
	KeyFile  string
	CAFile   string
}

// IsZero reports whether no file is named.
func (f Files) IsZero() bool { return f.CertFile == "" && f.KeyFile == "" && f.CAFile == "" }

// Material is a broker's certificate and the CAs it trusts.
type Material struct {
	Certificate tls.Certificate
	// Leaf is Certificate's parsed first certificate.
	Leaf *x509.Certificate
	// CAs are the trusted CA certificates; Pool holds them.
	CAs  []*x509.Certificate
	Pool *x509.CertPool
}

// ErrIncomplete is a set of files with some but not all of the three.
var ErrIncomplete = errors.New("the certificate, its key and the CA bundle are needed together")

// Load reads the files.
func Load(f Files) (*Material, error) {
	if f.CertFile == "" || f.KeyFile == "" || f.CAFile == "" {
		return nil, fmt.Errorf("tls: %w (--tls-cert-file, --tls-key-file, --tls-ca-file)", ErrIncomplete)
	}
	cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: certificate %s and key %s: %w", f.CertFile, f.KeyFile, err)
	}
	bundle, err := os.ReadFile(f.CAFile)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	m, err := NewMaterial(cert, bundle)
	if err != nil {
		return nil, fmt.Errorf("tls: %s: %w", f.CAFile, err)
	}
	return m, nil
}

// NewMaterial is Material from a loaded key pair and a PEM CA bundle.
func NewMaterial(cert tls.Certificate, caBundle []byte) (*Material, error) {
	cas, err := pki.ParseCertificates(caBundle)
	if err != nil {
		return nil, err
	}
	if len(cert.Certificate) == 0 {
		return nil, errors.New("tls: an empty certificate")
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, err
	}
	cert.Leaf = leaf
	pool := x509.NewCertPool()
	for _, ca := range cas {
		pool.AddCert(ca)
	}
	return &Material{Certificate: cert, Leaf: leaf, CAs: cas, Pool: pool}, nil
}

// ServerConfig is the TLS of a client listener: this broker's certificate,
// and client certificates of the trusted CAs verified when a client sends
// one (a listener that authenticates by certificate requires it in its
// handler, so that one port serves both kinds of client).
func (m *Material) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{m.Certificate},
		ClientCAs:    m.Pool,
		ClientAuth:   tls.VerifyClientCertIfGiven,
	}
}
