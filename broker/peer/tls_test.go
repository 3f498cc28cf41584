package peer

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/tlsconf"
	"github.com/kairolog/kairolog/internal/pki"
)

// brokerTransport is a required mutual-TLS transport with a certificate
// of role org from ca.
func brokerTransport(t *testing.T, ca *pki.Authority, org string) *tlsconf.Transport {
	t.Helper()
	kp, err := ca.Issue(pki.LeafSpec{CommonName: org, Organization: org, Server: true, Client: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tlsconf.NewMaterial(cert, ca.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := tlsconf.NewTransport(m, tlsconf.ModeRequired)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestCallOverMutualTLS: over mutual TLS a call needs both factors, a
// broker certificate and the cluster secret; either alone is refused.
func TestCallOverMutualTLS(t *testing.T) {
	ca, err := pki.NewAuthority("peer-test", time.Now(), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	secret := testSecret(t, "correct horse battery staple")
	server := brokerTransport(t, ca, pki.OrgBroker)
	m := NewMux(secret, slog.New(slog.NewTextHandler(io.Discard, nil)))
	Handle(m, opEcho, func(_ context.Context, req echoReq) (echoResp, error) { return echoResp{Text: req.Text}, nil })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: m, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(server.Listener(ln)) }()
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()

	for _, tc := range []struct {
		name   string
		client *Client
		want   string // "" for success, "refused" before the mux, or the mux's code
	}{
		{"broker certificate and secret", NewClient(secret, WithTLS(brokerTransport(t, ca, pki.OrgBroker))), ""},
		{"broker certificate, another secret", NewClient(testSecret(t, "another cluster's secret"),
			WithTLS(brokerTransport(t, ca, pki.OrgBroker))), api.CodeUnauthenticated},
		{"user certificate and secret", NewClient(secret, WithTLS(brokerTransport(t, ca, pki.OrgUser))), "refused"},
		{"secret without TLS", NewClient(secret), "refused"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		got, err := Call(ctx, tc.client, addr, opEcho, echoReq{Text: "hi"})
		cancel()
		switch {
		case tc.want == "" && (err != nil || got.Text != "hi"):
			t.Errorf("%s: %v %+v", tc.name, err, got)
		case tc.want == "refused" && (err == nil || api.IsCode(err, api.CodeUnauthenticated)):
			// The mux answers 401 to a call it saw: this one must not
			// get that far.
			t.Errorf("%s: %v, want the connection refused before the handler", tc.name, err)
		case tc.want == api.CodeUnauthenticated && !api.IsCode(err, api.CodeUnauthenticated):
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
}
