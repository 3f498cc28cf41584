package tlsconf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/kairolog/kairolog/internal/pki"
)

// Transport is the TLS of one transport between brokers (the peer
// listener, the raft transport). A nil *Transport is plain.
type Transport struct {
	Mode   Mode
	server *tls.Config
	client *tls.Config
}

// NewTransport is a Transport of mode with m's certificate and CAs; with
// ModeOff it is nil.
func NewTransport(m *Material, mode Mode) (*Transport, error) {
	if mode == ModeOff {
		return nil, nil
	}
	if m == nil {
		return nil, fmt.Errorf("peer TLS %s: %w", mode, ErrIncomplete)
	}
	verify := brokerVerifier(m.Pool)
	return &Transport{
		Mode: mode,
		server: &tls.Config{
			MinVersion:   tls.VersionTLS13,
			Certificates: []tls.Certificate{m.Certificate},
			// The chain is checked by verify, against the trusted CAs.
			ClientAuth:            tls.RequireAnyClientCert,
			VerifyPeerCertificate: verify,
		},
		client: &tls.Config{
			MinVersion:   tls.VersionTLS13,
			Certificates: []tls.Certificate{m.Certificate},
			// No host name check: see the package doc. verify checks
			// the chain and the role instead.
			InsecureSkipVerify:    true, //nolint:gosec // verified by VerifyPeerCertificate
			VerifyPeerCertificate: verify,
		},
	}, nil
}

// ErrNotBroker is a peer whose certificate is not a broker's of a trusted CA.
var ErrNotBroker = errors.New("not a broker certificate of this cluster")

// brokerVerifier accepts a chain whose leaf verifies against pool, for
// client and server use, and carries the broker role.
func brokerVerifier(pool *x509.CertPool) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return fmt.Errorf("%w: no certificate", ErrNotBroker)
		}
		leaf, err := x509.ParseCertificate(raw[0])
		if err != nil {
			return fmt.Errorf("%w: %v", ErrNotBroker, err)
		}
		inter := x509.NewCertPool()
		for _, r := range raw[1:] {
			if c, err := x509.ParseCertificate(r); err == nil {
				inter.AddCert(c)
			}
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			return fmt.Errorf("%w: %v", ErrNotBroker, err)
		}
		if !pki.IsBroker(leaf) {
			return fmt.Errorf("%w: %q is a %q certificate", ErrNotBroker, leaf.Subject.CommonName, pki.Role(leaf))
		}
		return nil
	}
}

// Listener wraps ln: TLS only when required, TLS or plain when
// permissive, ln itself for a nil Transport.
func (t *Transport) Listener(ln net.Listener) net.Listener {
	switch {
	case t == nil:
		return ln
	case t.Mode == ModeRequired:
		return tls.NewListener(ln, t.server)
	}
	return newSniffListener(ln, t.server)
}

// dialTimeout bounds a dial and its handshake when the context has no
// deadline.
const dialTimeout = 10 * time.Second

// DialContext connects to addr: TLS, or for a permissive Transport plain
// when the other side does not answer TLS; plain for a nil Transport.
func (t *Transport) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	if t == nil {
		return d.DialContext(ctx, network, addr)
	}
	raw, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	conn := tls.Client(raw, t.client)
	hctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	err = conn.HandshakeContext(hctx)
	if err == nil {
		return conn, nil
	}
	raw.Close()
	var notTLS tls.RecordHeaderError
	if t.Mode == ModePermissive && (errors.As(err, &notTLS) || isClosedDuringHandshake(err)) {
		return d.DialContext(ctx, network, addr)
	}
	return nil, err
}

// isClosedDuringHandshake is a plain peer that hung up on a ClientHello
// (raft's transport closes a connection whose first byte is no RPC type).
func isClosedDuringHandshake(err error) bool {
	var opErr *net.OpError
	return errors.Is(err, io.EOF) || errors.As(err, &opErr)
}

// Plain reports whether t dials and listens without TLS.
func (t *Transport) Plain() bool { return t == nil }
