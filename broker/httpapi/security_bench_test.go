package httpapi_test

import (
	"crypto/x509"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kairolog/kairolog/broker/auth"
	"github.com/kairolog/kairolog/internal/pki"
)

// securityModes are the client listeners the security benchmarks compare:
// plain HTTP, TLS, TLS with HTTP Basic against a SCRAM credential and ACL
// checks, TLS with a client certificate and ACL checks.
var securityModes = []string{"plain", "tls", "tls+scram+acls", "tls+cert+acls"}

// securedClient starts a broker in mode with a topic bench of 8
// partitions, and returns the URL and the request decorator of a client
// allowed to produce to and fetch from it.
func securedClient(b *testing.B, mode string) (url string, c *http.Client, sign func(*http.Request)) {
	sign = func(*http.Request) {}
	acls := `{"resource":"topic","name":"bench","operations":["Read","Write"]}`
	switch mode {
	case "plain":
		n := startSingle(b, nodeOptions{})
		n.expect(b, "POST", "/topics", `{"name":"bench","partitions":8}`, 201)
		return n.url, &http.Client{}, sign
	case "tls":
		sn := startSecured(b, auth.AuthNone, false)
		sn.call(b, sn.operator, "", "", "POST", "/topics", `{"name":"bench","partitions":8}`)
		return sn.url, sn.anyone, sign
	case "tls+scram+acls":
		sn := startSecured(b, auth.AuthSCRAM, true)
		sn.call(b, sn.operator, "", "", "PUT", "/users/bench", `{"password":"bench-pw","acls":[`+acls+`]}`)
		sn.call(b, sn.operator, "", "", "POST", "/topics", `{"name":"bench","partitions":8}`)
		return sn.url, sn.anyone, func(r *http.Request) { r.SetBasicAuth("bench", "bench-pw") }
	default:
		sn := startSecured(b, auth.AuthTLS, true)
		sn.call(b, sn.operator, "", "", "PUT", "/users/bench", `{"acls":[`+acls+`]}`)
		sn.call(b, sn.operator, "", "", "POST", "/topics", `{"name":"bench","partitions":8}`)
		roots := x509.NewCertPool()
		roots.AddCert(sn.ca.Cert)
		return sn.url, tlsClient(roots, issue(b, sn.ca, pki.LeafSpec{CommonName: "bench", Organization: pki.OrgUser, Client: true})), sign
	}
}

func sendAs(b *testing.B, c *http.Client, sign func(*http.Request), method, url, body string) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		b.Error(err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	sign(req)
	resp, err := c.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Errorf("%s: status %d", url, resp.StatusCode)
	}
}

// BenchmarkProduceSecurity measures single-record produces (100 bytes)
// over keep-alive connections in each security mode.
func BenchmarkProduceSecurity(b *testing.B) {
	body := `{"topic":"bench","message":"` + strings.Repeat("x", 100) + `"}`
	for _, mode := range securityModes {
		b.Run(mode, func(b *testing.B) {
			url, c, sign := securedClient(b, mode)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					sendAs(b, c, sign, "POST", url+"/produce", body)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkFetchSecurity measures fetches of 1000 records of 100 bytes in
// each security mode.
func BenchmarkFetchSecurity(b *testing.B) {
	var recs []string
	for i := 0; i < 1000; i++ {
		recs = append(recs, `{"value":"`+strings.Repeat("x", 100)+`"}`)
	}
	batch := `{"topic":"bench","partition":0,"records":[` + strings.Join(recs, ",") + `]}`
	for _, mode := range securityModes {
		b.Run(mode, func(b *testing.B) {
			url, c, sign := securedClient(b, mode)
			sendAs(b, c, sign, "POST", url+"/produce", batch)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					sendAs(b, c, sign, "GET", url+"/fetch?topic=bench&partition=0&offset=0&max_records=1000", "")
				}
			})
			b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "records/s")
		})
	}
}
