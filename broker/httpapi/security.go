package httpapi

import (
	"context"
	"net"
	"net/http"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/auth"
)

// Authentication and authorization on the client port (docs/security.md).
// Every request but the probes and /metrics is authenticated first, in
// ServeHTTP: a client certificate of the cluster CA (the operator's, or a
// user's when the listener authenticates by certificate), or HTTP Basic
// checked against the user's SCRAM-SHA-512 credential in the metadata
// quorum. No or bad credentials on a listener that requires them is 401
// UNAUTHENTICATED with a WWW-Authenticate challenge. Once the route has
// read its request, authorize checks the rights the route needs (access.go)
// against the principal's ACLs: 403 with Kafka's TOPIC_, GROUP_ or
// CLUSTER_AUTHORIZATION_FAILED.

type principalKey struct{}

// principalOf is the principal ServeHTTP authenticated for r.
func principalOf(r *http.Request) auth.Principal {
	p, _ := r.Context().Value(principalKey{}).(auth.Principal)
	return p
}

// basicRealm is the challenge of a listener that takes passwords.
const basicRealm = `Basic realm="kairolog", charset="UTF-8"`

// authenticate finds who made r and returns r carrying its principal, or
// an UNAUTHENTICATED error.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, error) {
	sec := s.opts.Security
	var p auth.Principal
	if cp, ok := auth.CertificatePrincipal(r.TLS); ok && (cp.Operator || sec.Authentication == auth.AuthTLS) {
		p = cp
	}
	if name, password, ok := r.BasicAuth(); ok && p.Anonymous() {
		if sec.Authentication != auth.AuthSCRAM {
			return r, s.unauthenticated(w, "this listener takes no passwords")
		}
		if r.TLS == nil {
			return r, s.unauthenticated(w, "a password over a connection without TLS is refused")
		}
		if !s.passwords.Verify(s.b.User(name), password) {
			return r, s.unauthenticated(w, "bad user name or password")
		}
		p = auth.Principal{Name: name}
	}
	if p.Anonymous() && sec.Authentication != auth.AuthNone && sec.Authentication != "" {
		return r, s.unauthenticated(w, "credentials required (%s)", sec.Authentication)
	}
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p)), nil
}

func (s *Server) unauthenticated(w http.ResponseWriter, format string, args ...any) error {
	if s.opts.Security.Authentication == auth.AuthSCRAM {
		w.Header().Set("WWW-Authenticate", basicRealm)
	}
	return api.Errorf(api.CodeUnauthenticated, format, args...)
}

// authorize checks that r's principal may make the request req of r's
// route; nil when the listener does not authorize.
func (s *Server) authorize(r *http.Request, req any) error {
	sec := s.opts.Security
	if !sec.Authorization {
		return nil
	}
	p := principalOf(r)
	if p.Anonymous() {
		return api.Errorf(api.CodeUnauthenticated, "authorization is on: anonymous requests are refused")
	}
	needs, known := s.routeNeeds(r, req)
	if !known {
		// A route without a line in the rights table: only superusers.
		needs = []auth.Need{{Resource: auth.ResourceCluster, Op: auth.OpAll}}
	}
	user := s.b.User(p.Name)
	host := remoteHost(r)
	for _, need := range needs {
		if sec.Authorizer.Allowed(p, user, host, need) {
			continue
		}
		// Kafka lets a cluster Create stand in for a topic Create.
		if need.Resource == auth.ResourceTopic && need.Op == auth.OpCreate &&
			sec.Authorizer.Allowed(p, user, host, auth.Need{Resource: auth.ResourceCluster, Op: auth.OpCreate}) {
			continue
		}
		return denied(p, need)
	}
	return nil
}

func denied(p auth.Principal, need auth.Need) error {
	switch need.Resource {
	case auth.ResourceTopic:
		return api.Errorf(api.CodeTopicAuthorizationFailed, "%s may not %s topic %q", p, need.Op, need.Name)
	case auth.ResourceGroup:
		return api.Errorf(api.CodeGroupAuthorizationFailed, "%s may not %s group %q", p, need.Op, need.Name)
	}
	return api.Errorf(api.CodeClusterAuthorizationFailed, "%s may not %s the cluster", p, need.Op)
}

func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
