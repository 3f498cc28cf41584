package localcluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity is long enough for any local run and short enough to be
// obviously a throwaway.
const certValidity = 365 * 24 * time.Hour

// authority is the cluster CA: it signs every serving and client certificate,
// and kube-apiserver, the kubelet server and in-cluster clients trust it.
type authority struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
}

// certSpec describes one leaf certificate.
type certSpec struct {
	commonName    string
	organizations []string
	dnsNames      []string
	ips           []net.IP
	server        bool
	client        bool
}

// keyPair is a PEM-encoded certificate and its private key.
type keyPair struct {
	certPEM []byte
	keyPEM  []byte
}

func newAuthority(commonName string) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          newSerial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key, certPEM: pemBlock("CERTIFICATE", der)}, nil
}

// issue signs a new leaf certificate for spec.
func (a *authority) issue(spec certSpec) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: newSerial(),
		Subject:      pkix.Name{CommonName: spec.commonName, Organization: spec.organizations},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		DNSNames:     spec.dnsNames,
		IPAddresses:  spec.ips,
	}
	if spec.server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if spec.client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, key.Public(), a.key)
	if err != nil {
		return keyPair{}, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return keyPair{}, err
	}
	return keyPair{certPEM: pemBlock("CERTIFICATE", der), keyPEM: keyPEM}, nil
}

// write stores the pair as dir/name.crt and dir/name.key and returns both paths.
func (k keyPair) write(dir, name string) (certPath, keyPath string, err error) {
	certPath = filepath.Join(dir, name+".crt")
	keyPath = filepath.Join(dir, name+".key")
	if err := os.WriteFile(certPath, k.certPEM, 0o644); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(keyPath, k.keyPEM, 0o600); err != nil {
		return "", "", err
	}
	return certPath, keyPath, nil
}

// newSigningKey returns the service-account token signing key pair (private
// key PEM for kube-apiserver's signer and the controller-manager, public key
// PEM for token verification).
func newSigningKey() (privPEM, pubPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	privPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, nil, err
	}
	return privPEM, pemBlock("PUBLIC KEY", pubDER), nil
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal key: %w", err)
	}
	return pemBlock("EC PRIVATE KEY", der), nil
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

func newSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return n
}
