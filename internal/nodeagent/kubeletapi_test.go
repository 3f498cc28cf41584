package nodeagent

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestKubeletAPIAuthorization(t *testing.T) {
	a := &Agent{cfg: Config{KubeletClients: []string{"kube-apiserver-kubelet-client"}}}
	h := a.authorize(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	request := func(path string, subject *pkix.Name) int {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.TLS = &tls.ConnectionState{}
		if subject != nil {
			r.TLS.PeerCertificates = []*x509.Certificate{{Subject: *subject}}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for _, tc := range []struct {
		name    string
		path    string
		subject *pkix.Name
		want    int
	}{
		{"kube-apiserver", "/containerLogs/ns/pod/c", &pkix.Name{CommonName: "kube-apiserver-kubelet-client"}, http.StatusOK},
		{"cluster admin", "/pods", &pkix.Name{CommonName: "someone", Organization: []string{"system:masters"}}, http.StatusOK},
		{"another node", "/portForward/ns/pod", &pkix.Name{CommonName: "system:node:other", Organization: []string{"system:nodes"}}, http.StatusForbidden},
		{"no certificate", "/pods", nil, http.StatusUnauthorized},
		{"health check", "/healthz", nil, http.StatusOK},
	} {
		if got := request(tc.path, tc.subject); got != tc.want {
			t.Errorf("%s: %s → %d, want %d", tc.name, tc.path, got, tc.want)
		}
	}
}
