package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/auth"
	"github.com/kairolog/kairolog/broker/tlsconf"
	"github.com/kairolog/kairolog/internal/pki"
)

// TestPeerTLSFlags: the --tls-* files turn mutual TLS between brokers on
// (required unless --peer-tls says otherwise); a mode without files, a
// missing file or an unknown mode is a clear error.
func TestPeerTLSFlags(t *testing.T) {
	files := tlsFileFlags(t)
	for _, tc := range []struct {
		name    string
		args    []string
		mode    tlsconf.Mode // "" for plain
		wantErr string
	}{
		{"no flags", nil, "", ""},
		{"files", files, tlsconf.ModeRequired, ""},
		{"files, permissive", append(files, "--peer-tls", "permissive"), tlsconf.ModePermissive, ""},
		{"files, off", append(files, "--peer-tls", "off"), "", ""},
		{"required without files", []string{"--peer-tls", "required"}, "", "--tls-cert-file"},
		{"unknown mode", append(files, "--peer-tls", "maybe"), "", "want off, permissive or required"},
		{"missing key", append(files[:2:2], files[4:]...), "", "--tls-key-file"},
	} {
		o, err := parseOptions(tc.args, func(string) string { return "" }, "kairo-0", io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		cfg, _, err := brokerConfig(o, "kairo-0")
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		switch {
		case tc.mode == "" && cfg.PeerTLS != nil:
			t.Errorf("%s: peer TLS %s, want plain", tc.name, cfg.PeerTLS.Mode)
		case tc.mode != "" && (cfg.PeerTLS == nil || cfg.PeerTLS.Mode != tc.mode):
			t.Errorf("%s: peer TLS %v, want %s", tc.name, cfg.PeerTLS, tc.mode)
		}
	}
}

// TestHTTPSecurityFlags: --http-tls serves the client API with the
// --tls-* files; authentication without TLS, an unknown authentication or
// --http-tls without files is a clear error; --super-users is a list.
func TestHTTPSecurityFlags(t *testing.T) {
	files := tlsFileFlags(t)
	for _, tc := range []struct {
		name    string
		args    []string
		tls     bool
		authn   auth.Authentication
		wantErr string
	}{
		{"open", nil, false, auth.AuthNone, ""},
		{"TLS", append(files, "--http-tls"), true, auth.AuthNone, ""},
		{"SCRAM over TLS", append(files, "--http-tls", "--http-authentication", "scram-sha-512", "--authorization",
			"--super-users", "root, admin"), true, auth.AuthSCRAM, ""},
		{"SCRAM without TLS", []string{"--http-authentication", "scram-sha-512"}, false, "", "needs --http-tls"},
		{"unknown", append(files, "--http-tls", "--http-authentication", "kerberos"), false, "", "want none, scram-sha-512 or tls"},
		{"TLS without files", []string{"--http-tls"}, false, "", "--tls-cert-file"},
	} {
		o, err := parseOptions(tc.args, func(string) string { return "" }, "kairo-0", io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		conf, sec, err := httpSecurity(o)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || (conf != nil) != tc.tls || sec.Authentication != tc.authn {
			t.Errorf("%s: tls %v, %+v, %v", tc.name, conf != nil, sec, err)
		}
		if tc.name == "SCRAM over TLS" && (!sec.Authorization || strings.Join(sec.Authorizer.SuperUsers, ",") != "root,admin") {
			t.Errorf("%s: %+v", tc.name, sec)
		}
	}
}

// TestKafkaSecurityFlags: --kafka-tls and --kafka-gateway-tls serve the
// Kafka listeners with the --tls-* files; SCRAM needs no TLS, a
// certificate does; an unknown authentication or TLS without files is a
// clear error naming the flag; --authorization and --super-users apply to
// both Kafka listeners as to HTTP.
func TestKafkaSecurityFlags(t *testing.T) {
	files := tlsFileFlags(t)
	for _, tc := range []struct {
		name                string
		args                []string
		env                 map[string]string
		kafkaTLS, gwTLS     bool
		kafkaAuthn, gwAuthn auth.Authentication
		wantErr             string
	}{
		{"open", nil, nil, false, false, auth.AuthNone, auth.AuthNone, ""},
		{"SASL_SSL and mTLS gateway", append(files, "--kafka-tls", "--kafka-authentication", "scram-sha-512",
			"--kafka-gateway-tls", "--kafka-gateway-authentication", "tls", "--authorization", "--super-users", "root"),
			nil, true, true, auth.AuthSCRAM, auth.AuthTLS, ""},
		{"SASL_PLAINTEXT", []string{"--kafka-authentication", "scram-sha-512"}, nil, false, false, auth.AuthSCRAM, auth.AuthNone, ""},
		{"from the environment", files, map[string]string{"KAIRO_KAFKA_GATEWAY_TLS": "true", "KAIRO_KAFKA_GATEWAY_AUTHENTICATION": "scram-sha-512"},
			false, true, auth.AuthNone, auth.AuthSCRAM, ""},
		{"certificate without TLS", []string{"--kafka-authentication", "tls"}, nil, false, false, "", "", "--kafka-authentication=tls needs --kafka-tls"},
		{"gateway certificate without TLS", []string{"--kafka-gateway-authentication", "tls"}, nil, false, false, "", "", "--kafka-gateway-authentication=tls needs --kafka-gateway-tls"},
		{"unknown", []string{"--kafka-authentication", "gssapi"}, nil, false, false, "", "", "want none, scram-sha-512 or tls"},
		{"TLS without files", []string{"--kafka-gateway-tls"}, nil, false, false, "", "", "--kafka-gateway-tls"},
	} {
		o, err := parseOptions(tc.args, func(k string) string { return tc.env[k] }, "kairo-0", io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		sec, err := kafkaSecurities(o)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || (sec.kafkaTLS != nil) != tc.kafkaTLS || (sec.gatewayTLS != nil) != tc.gwTLS ||
			sec.kafka.Authentication != tc.kafkaAuthn || sec.gateway.Authentication != tc.gwAuthn {
			t.Errorf("%s: %+v, %v", tc.name, sec, err)
		}
		if tc.name == "SASL_SSL and mTLS gateway" && (!sec.kafka.Authorization || !sec.gateway.Authorization ||
			strings.Join(sec.gateway.Authorizer.SuperUsers, ",") != "root") {
			t.Errorf("%s: authorization %+v %+v", tc.name, sec.kafka, sec.gateway)
		}
	}
}

// tlsFileFlags writes a broker certificate, its key and its CA into a
// temporary directory and returns the --tls-* flags naming them.
func tlsFileFlags(t *testing.T) []string {
	t.Helper()
	ca, err := pki.NewAuthority("flags", time.Now(), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.Issue(pki.LeafSpec{CommonName: "b", Organization: pki.OrgBroker, Server: true, Client: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"tls.crt": kp.CertPEM, "tls.key": kp.KeyPEM, "ca.crt": ca.CertPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"--tls-cert-file", filepath.Join(dir, "tls.crt"), "--tls-key-file", filepath.Join(dir, "tls.key"),
		"--tls-ca-file", filepath.Join(dir, "ca.crt")}
}
