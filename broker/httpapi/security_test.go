package httpapi_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/auth"
	"github.com/kairolog/kairolog/broker/httpapi"
	"github.com/kairolog/kairolog/internal/pki"
)

// securedNode is a broker whose client listener speaks TLS with a
// certificate of a test CA, authenticates with SCRAM passwords (HTTP
// Basic) or certificates, and authorizes with the users' ACLs when asked
// to; "root" is a superuser.
type securedNode struct {
	*node
	ca       *pki.Authority
	operator *http.Client // the operator's certificate
	anyone   *http.Client // TLS, no certificate
}

func startSecured(t testing.TB, authn auth.Authentication, authorization bool) *securedNode {
	t.Helper()
	now := time.Now()
	ca, err := pki.NewAuthority("test CA", now, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	server := issue(t, ca, pki.LeafSpec{CommonName: "kairo-0", Organization: pki.OrgBroker, DNSNames: []string{"localhost"},
		IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, Server: true, Client: true})
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	serverConf := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{server},
		ClientCAs: roots, ClientAuth: tls.VerifyClientCertIfGiven}
	anyone := tlsClient(roots)
	sn := &securedNode{ca: ca, anyone: anyone,
		operator: tlsClient(roots, issue(t, ca, pki.LeafSpec{CommonName: pki.OperatorName, Organization: pki.OrgOperator, Client: true}))}
	sn.node = startSingle(t, nodeOptions{tls: serverConf, client: anyone, security: auth.Listener{
		Authentication: authn, Authorization: authorization, Authorizer: auth.Authorizer{SuperUsers: []string{"root"}}}})
	return sn
}

func issue(t testing.TB, ca *pki.Authority, spec pki.LeafSpec) tls.Certificate {
	t.Helper()
	kp, err := ca.Issue(spec, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func tlsClient(roots *x509.CertPool, certs ...tls.Certificate) *http.Client {
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs, MinVersion: tls.VersionTLS12}}}
}

// call sends a request as c, with Basic credentials when user is set.
func (sn *securedNode) call(t testing.TB, c *http.Client, user, password, method, path, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, sn.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: %d, not a JSON object: %q", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, resp.Header, m
}

// TestHTTPAuthenticationAndACLs: the operator's certificate manages users
// with authorization on; a user's password is checked against its SCRAM
// credential; a user with Read on a topic fetches from it and is refused a
// produce; no or bad credentials are 401 with a challenge; a deleted user
// is refused at once.
func TestHTTPAuthenticationAndACLs(t *testing.T) {
	sn := startSecured(t, auth.AuthSCRAM, true)
	const (
		readOrders  = `{"password":"reader-pw","acls":[{"resource":"topic","name":"orders","operations":["Read"]},{"resource":"group","name":"readers-","pattern":"prefix","operations":["Read"]}]}`
		writeOrders = `{"password":"writer-pw","acls":[{"resource":"topic","name":"ord","pattern":"prefix","operations":["Write"]},{"resource":"topic","name":"orders-secret","operations":["All"],"permission":"deny"}]}`
	)
	for _, u := range []struct{ name, body string }{
		{"root", `{"password":"root-pw"}`}, {"reader", readOrders}, {"writer", writeOrders},
	} {
		if st, _, m := sn.call(t, sn.operator, "", "", "PUT", "/users/"+u.name, u.body); st != 200 || m["status"] != "created" {
			t.Fatalf("PUT /users/%s as the operator: %d %v", u.name, st, m)
		}
	}
	_, _, view := sn.call(t, sn.operator, "", "", "GET", "/users/reader", "")
	if raw, _ := json.Marshal(view); strings.Contains(string(raw), "stored_key") || strings.Contains(string(raw), "server_key") ||
		strings.Contains(string(raw), "reader-pw") || !strings.Contains(string(raw), auth.Mechanism) {
		t.Errorf("GET /users/reader shows more or less than the user: %s", raw)
	}
	// The salt and iteration count, as a SCRAM exchange tells anyone,
	// let a writer see which credential the brokers hold.
	if sc, _ := view["scram"].(map[string]any); sc["iterations"] != float64(auth.MinIterations) || sc["salt"] == "" || sc["salt"] == nil {
		t.Errorf("GET /users/reader: scram %v, want the salt and %d iterations", view["scram"], auth.MinIterations)
	}

	for _, tc := range []struct {
		name           string
		user, password string
		method, path   string
		body           string
		status         int
		code           string
	}{
		{"no credentials", "", "", "GET", "/topics", "", 401, "UNAUTHENTICATED"},
		{"wrong password", "reader", "nope", "GET", "/topics", "", 401, "UNAUTHENTICATED"},
		{"unknown user", "mallory", "reader-pw", "GET", "/topics", "", 401, "UNAUTHENTICATED"},
		{"probes stay open", "", "", "GET", "/health", "", 200, ""},
		{"reader may not create a topic", "reader", "reader-pw", "POST", "/topics", `{"name":"orders","partitions":1}`, 403, "TOPIC_AUTHORIZATION_FAILED"},
		{"superuser creates it", "root", "root-pw", "POST", "/topics", `{"name":"orders","partitions":1}`, 201, ""},
		{"superuser creates another", "root", "root-pw", "POST", "/topics", `{"name":"orders-secret","partitions":1}`, 201, ""},
		{"reader may not produce", "reader", "reader-pw", "POST", "/produce", `{"topic":"orders","value":"x"}`, 403, "TOPIC_AUTHORIZATION_FAILED"},
		{"writer produces by prefix", "writer", "writer-pw", "POST", "/produce", `{"topic":"orders","value":"hello"}`, 200, ""},
		{"a deny wins over the prefix", "writer", "writer-pw", "POST", "/produce", `{"topic":"orders-secret","value":"x"}`, 403, "TOPIC_AUTHORIZATION_FAILED"},
		{"writer may not fetch", "writer", "writer-pw", "GET", "/fetch?topic=orders&partition=0&offset=0", "", 403, "TOPIC_AUTHORIZATION_FAILED"},
		{"reader fetches", "reader", "reader-pw", "GET", "/fetch?topic=orders&partition=0&offset=0", "", 200, ""},
		{"reader describes its topic", "reader", "reader-pw", "GET", "/topics/orders", "", 200, ""},
		{"reader may not delete it", "reader", "reader-pw", "DELETE", "/topics/orders", "", 403, "TOPIC_AUTHORIZATION_FAILED"},
		{"reader commits in its groups", "reader", "reader-pw", "POST", "/offsets/commit", `{"group":"readers-1","topic":"orders","partition":0,"offset":1}`, 200, ""},
		{"reader may not use another group", "reader", "reader-pw", "POST", "/offsets/commit", `{"group":"others","topic":"orders","partition":0,"offset":1}`, 403, "GROUP_AUTHORIZATION_FAILED"},
		{"reader may not list users", "reader", "reader-pw", "GET", "/users", "", 403, "CLUSTER_AUTHORIZATION_FAILED"},
		{"reader may not drain a broker", "reader", "reader-pw", "POST", "/brokers/0/drain", "", 403, "CLUSTER_AUTHORIZATION_FAILED"},
		{"reader may not make itself a superuser", "reader", "reader-pw", "PUT", "/users/reader", `{"password":"x","acls":[{"resource":"cluster","operations":["All"]}]}`, 403, "CLUSTER_AUTHORIZATION_FAILED"},
		{"any user reads the metadata", "reader", "reader-pw", "GET", "/metadata", "", 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, h, m := sn.call(t, sn.anyone, tc.user, tc.password, tc.method, tc.path, tc.body)
			if st != tc.status || (tc.code != "" && m["code"] != tc.code) {
				t.Fatalf("%d %v, want %d %s", st, m, tc.status, tc.code)
			}
			if st == 401 && !strings.HasPrefix(h.Get("WWW-Authenticate"), "Basic ") {
				t.Errorf("401 without a Basic challenge: %q", h.Get("WWW-Authenticate"))
			}
		})
	}

	_, _, fetched := sn.call(t, sn.anyone, "reader", "reader-pw", "GET", "/fetch?topic=orders&partition=0&offset=0", "")
	if recs, _ := fetched["records"].([]any); len(recs) != 1 {
		t.Errorf("reader fetched %v, want the writer's one record", fetched)
	}

	if st, _, m := sn.call(t, sn.operator, "", "", "DELETE", "/users/reader", ""); st != 200 {
		t.Fatalf("DELETE /users/reader: %d %v", st, m)
	}
	if st, _, m := sn.call(t, sn.anyone, "reader", "reader-pw", "GET", "/fetch?topic=orders&partition=0&offset=0", ""); st != 401 {
		t.Errorf("a deleted user fetched: %d %v", st, m)
	}
	if st, _, m := sn.call(t, sn.operator, "", "", "DELETE", "/users/reader", ""); st != 404 || m["code"] != "NOT_FOUND" {
		t.Errorf("deleting a missing user: %d %v", st, m)
	}
}

// TestHTTPClientCertificates: with tls authentication a user's
// certificate names it; a certificate of another CA names nobody;
// passwords are not taken.
func TestHTTPClientCertificates(t *testing.T) {
	sn := startSecured(t, auth.AuthTLS, true)
	for _, body := range []string{
		`{"acls":[{"resource":"topic","name":"*","operations":["Describe"]}]}`,
	} {
		if st, _, m := sn.call(t, sn.operator, "", "", "PUT", "/users/carol", body); st != 200 {
			t.Fatalf("PUT /users/carol: %d %v", st, m)
		}
	}
	if st, _, m := sn.call(t, sn.operator, "", "", "POST", "/topics", `{"name":"orders","partitions":1}`); st != 201 {
		t.Fatalf("the operator creates a topic: %d %v", st, m)
	}
	roots := x509.NewCertPool()
	roots.AddCert(sn.ca.Cert)
	carol := tlsClient(roots, issue(t, sn.ca, pki.LeafSpec{CommonName: "carol", Organization: pki.OrgUser, Client: true}))
	if st, _, m := sn.call(t, carol, "", "", "GET", "/topics/orders", ""); st != 200 {
		t.Errorf("carol describes orders: %d %v", st, m)
	}
	if st, _, m := sn.call(t, carol, "", "", "POST", "/produce", `{"topic":"orders","value":"x"}`); st != 403 || m["code"] != "TOPIC_AUTHORIZATION_FAILED" {
		t.Errorf("carol produces: %d %v, want 403", st, m)
	}
	if st, _, m := sn.call(t, sn.anyone, "", "", "GET", "/topics/orders", ""); st != 401 || m["code"] != "UNAUTHENTICATED" {
		t.Errorf("no certificate: %d %v, want 401", st, m)
	}
	if st, _, m := sn.call(t, sn.anyone, "carol", "x", "GET", "/topics/orders", ""); st != 401 {
		t.Errorf("a password on a certificate listener: %d %v, want 401", st, m)
	}
	now := time.Now()
	other, err := pki.NewAuthority("another CA", now, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	stranger := tlsClient(roots, issue(t, other, pki.LeafSpec{CommonName: "carol", Organization: pki.OrgUser, Client: true}))
	// The server asks for certificates of its CA only, so the client
	// sends none (or the handshake fails): either way no principal.
	if resp, err := stranger.Get(sn.url + "/topics/orders"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("a certificate of another CA: %d, want 401", resp.StatusCode)
		}
	}
}

// TestEveryRouteHasRights: a route without a line in the rights table
// would take only superusers; adding one must say what it needs.
func TestEveryRouteHasRights(t *testing.T) {
	n := startSingle(t, nodeOptions{})
	for _, name := range n.public.RouteNames() {
		if !httpapi.HasRights(name) {
			t.Errorf("route %s has no line in routeRights (access.go)", name)
		}
	}
}

// FuzzAuthorizationHeader: whatever a client sends as Authorization, the
// answer is 401 (or 200 for the one right password), never a 5xx or a
// panic, and nothing is produced without the password.
func FuzzAuthorizationHeader(f *testing.F) {
	sn := startSecured(f, auth.AuthSCRAM, true)
	sn.call(f, sn.operator, "", "", "PUT", "/users/alice", `{"password":"alice-pw","acls":[{"resource":"topic","name":"*","operations":["All"]}]}`)
	sn.call(f, sn.operator, "", "", "POST", "/topics", `{"name":"orders","partitions":1}`)
	h := sn.srv.Config.Handler
	for _, seed := range []string{"Basic YWxpY2U6YWxpY2UtcHc=", "Basic YWxpY2U6d3Jvbmc=", "Basic", "Basic !!!", "Bearer x",
		"Basic " + strings.Repeat("A", 5000), "basic YWxpY2U6YWxpY2UtcHc=", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		req := httptest.NewRequest("POST", "/produce", strings.NewReader(`{"topic":"orders","value":"x"}`))
		req.TLS = &tls.ConnectionState{HandshakeComplete: true}
		req.Header.Set("Authorization", header)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		user, password, ok := req.BasicAuth()
		right := ok && user == "alice" && password == "alice-pw"
		switch {
		case w.Code >= 500:
			t.Fatalf("%q: %d %s", header, w.Code, w.Body)
		case w.Code == 200 && !right:
			t.Fatalf("%q produced without the password", header)
		case w.Code != 200 && right:
			t.Fatalf("%q: the right password got %d %s", header, w.Code, w.Body)
		case w.Code != 200 && w.Code != 401:
			t.Fatalf("%q: %d %s, want 200 or 401", header, w.Code, w.Body)
		}
	})
}
