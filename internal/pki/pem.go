package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
)

// MaxBundleCertificates bounds the certificates read from one PEM bundle:
// a trust bundle holds a CA or two, not thousands.
const MaxBundleCertificates = 16

// ErrNoCertificate is PEM text without a certificate.
var ErrNoCertificate = errors.New("no certificate")

// ParseCertificates reads the certificates of a PEM bundle, in order. Other
// blocks (keys, parameters) are skipped; text outside blocks is ignored as
// openssl does.
func ParseCertificates(bundle []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	rest := bundle
	for len(rest) > 0 {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if len(out) == MaxBundleCertificates {
			return nil, fmt.Errorf("pki: more than %d certificates in one bundle", MaxBundleCertificates)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("pki: certificate %d: %w", len(out)+1, err)
		}
		out = append(out, cert)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("pki: %w in %d bytes of PEM", ErrNoCertificate, len(bundle))
	}
	return out, nil
}

// ParseKey reads the first private key of PEM text: PKCS#8, SEC 1 (EC) or
// PKCS#1 (RSA).
func ParseKey(keyPEM []byte) (crypto.Signer, error) {
	rest := keyPEM
	for len(rest) > 0 {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		var key any
		var err error
		switch block.Type {
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(block.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("pki: private key: %w", err)
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("pki: private key of type %T cannot sign", key)
		}
		return signer, nil
	}
	return nil, errors.New("pki: no private key in the PEM text")
}

// EncodeKey is key as a PKCS#8 PEM block.
func EncodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// EncodeCertificates is a PEM bundle of certs, in order.
func EncodeCertificates(certs ...*x509.Certificate) []byte {
	var out []byte
	for _, c := range certs {
		out = append(out, encodeCert(c.Raw)...)
	}
	return out
}

// Fingerprint is the SHA-256 of cert's DER bytes, in hex: what names one
// certificate in annotations and logs.
func Fingerprint(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.Raw)
	return hex.EncodeToString(sum[:])
}
