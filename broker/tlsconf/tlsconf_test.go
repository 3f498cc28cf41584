package tlsconf

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kairolog/kairolog/internal/pki"
)

type testCA struct {
	t  *testing.T
	ca *pki.Authority
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	ca, err := pki.NewAuthority("test", time.Now(), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{t: t, ca: ca}
}

// material issues a certificate of role org and trusts the given CAs.
func (c *testCA) material(org string, trust ...*testCA) *Material {
	c.t.Helper()
	kp, err := c.ca.Issue(pki.LeafSpec{CommonName: org, Organization: org, Server: true, Client: true,
		IPs: []net.IP{net.ParseIP("127.0.0.1")}}, time.Now())
	if err != nil {
		c.t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		c.t.Fatal(err)
	}
	var bundle []byte
	for _, tc := range append(trust, c) {
		bundle = append(bundle, tc.ca.CertPEM...)
	}
	m, err := NewMaterial(cert, bundle)
	if err != nil {
		c.t.Fatal(err)
	}
	return m
}

func transport(t *testing.T, m *Material, mode Mode) *Transport {
	t.Helper()
	tr, err := NewTransport(m, mode)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// echoServer answers every connection of ln with what it reads, once.
func echoServer(t *testing.T, ln net.Listener) string {
	t.Helper()
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4)
				if _, err := io.ReadFull(c, buf); err == nil {
					_, _ = c.Write(buf)
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// roundTrip dials addr with tr, sends "ping" and reports whether it came
// back, and whether over TLS.
func roundTrip(tr *Transport, addr string) (ok, overTLS bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := tr.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false, false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, overTLS = c.(*tls.Conn)
	if _, err := c.Write([]byte("ping")); err != nil {
		return false, overTLS
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		return false, overTLS
	}
	return true, overTLS
}

// TestRequiredAdmitsOnlyBrokers: with TLS required, a broker of a trusted
// CA connects; a user's or the operator's certificate of the same CA, a
// broker of another CA and a plain client do not.
func TestRequiredAdmitsOnlyBrokers(t *testing.T) {
	ca, other := newTestCA(t), newTestCA(t)
	server := transport(t, ca.material(pki.OrgBroker), ModeRequired)
	addr := echoServer(t, server.Listener(listen(t)))
	for _, tc := range []struct {
		name   string
		client *Transport
		want   bool
	}{
		{"broker", transport(t, ca.material(pki.OrgBroker), ModeRequired), true},
		{"broker of a CA trusting both", transport(t, ca.material(pki.OrgBroker, other), ModeRequired), true},
		{"user of the same CA", transport(t, ca.material(pki.OrgUser), ModeRequired), false},
		{"operator of the same CA", transport(t, ca.material(pki.OrgOperator), ModeRequired), false},
		{"broker of another CA", transport(t, other.material(pki.OrgBroker, ca), ModeRequired), false},
		{"plain", nil, false},
	} {
		if ok, _ := roundTrip(tc.client, addr); ok != tc.want {
			t.Errorf("%s: connected=%v, want %v", tc.name, ok, tc.want)
		}
	}
}

// TestRequiredClientRefusesAStranger: a broker dialling with TLS required
// hangs up on a server whose certificate is not a broker's of its CAs.
func TestRequiredClientRefusesAStranger(t *testing.T) {
	ca, other := newTestCA(t), newTestCA(t)
	stranger := transport(t, other.material(pki.OrgBroker, ca), ModePermissive)
	addr := echoServer(t, stranger.Listener(listen(t)))
	if ok, _ := roundTrip(transport(t, ca.material(pki.OrgBroker), ModeRequired), addr); ok {
		t.Fatal("connected to a broker of another CA")
	}
}

// TestPermissiveBridgesARollingChange: a permissive listener takes TLS and
// plain clients on one port; a permissive client talks TLS to it and
// falls back to plain with a broker that has no TLS yet, but never with a
// TLS server that refuses it.
func TestPermissiveBridgesARollingChange(t *testing.T) {
	ca := newTestCA(t)
	permissive := transport(t, ca.material(pki.OrgBroker), ModePermissive)
	addr := echoServer(t, permissive.Listener(listen(t)))
	plainAddr := echoServer(t, listen(t))
	required := transport(t, ca.material(pki.OrgBroker), ModeRequired)
	for _, tc := range []struct {
		name        string
		client      *Transport
		addr        string
		want, asTLS bool
	}{
		{"plain client to permissive", nil, addr, true, false},
		{"required client to permissive", required, addr, true, true},
		{"permissive client to permissive", permissive, addr, true, true},
		{"permissive client to plain", permissive, plainAddr, true, false},
		{"required client to plain", required, plainAddr, false, false},
	} {
		ok, overTLS := roundTrip(tc.client, tc.addr)
		if ok != tc.want || (ok && overTLS != tc.asTLS) {
			t.Errorf("%s: connected=%v tls=%v, want %v tls=%v", tc.name, ok, overTLS, tc.want, tc.asTLS)
		}
	}
	userCA := transport(t, ca.material(pki.OrgUser), ModePermissive)
	if ok, _ := roundTrip(userCA, addr); ok {
		t.Error("a user certificate connected to a permissive listener over TLS")
	}
}

// TestSilentConnectionHoldsUpNoOther: a client that connects and sends
// nothing does not stop the permissive listener from accepting others.
func TestSilentConnectionHoldsUpNoOther(t *testing.T) {
	ca := newTestCA(t)
	permissive := transport(t, ca.material(pki.OrgBroker), ModePermissive)
	addr := echoServer(t, permissive.Listener(listen(t)))
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if ok, _ := roundTrip(nil, addr); !ok {
		t.Fatal("a second client was not served while the first is silent")
	}
}

// TestLoad reads the three files and refuses an incomplete set.
func TestLoad(t *testing.T) {
	ca := newTestCA(t)
	kp, err := ca.ca.Issue(pki.LeafSpec{CommonName: "b", Organization: pki.OrgBroker, Server: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := Files{CertFile: filepath.Join(dir, "c"), KeyFile: filepath.Join(dir, "k"), CAFile: filepath.Join(dir, "ca")}
	for path, b := range map[string][]byte{files.CertFile: kp.CertPEM, files.KeyFile: kp.KeyPEM, files.CAFile: ca.ca.CertPEM} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Load(files)
	if err != nil {
		t.Fatal(err)
	}
	if !pki.IsBroker(m.Leaf) || len(m.CAs) != 1 {
		t.Fatalf("loaded %q with %d CAs", m.Leaf.Subject.CommonName, len(m.CAs))
	}
	if _, err := Load(Files{CertFile: files.CertFile}); err == nil {
		t.Fatal("a certificate without its key and CA was accepted")
	}
	if _, err := NewTransport(nil, ModeRequired); err == nil {
		t.Fatal("TLS required without certificates was accepted")
	}
}
