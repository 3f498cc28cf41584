package auth

import (
	"crypto/tls"
	"fmt"

	"github.com/kairolog/kairolog/internal/pki"
)

// Authentication is how a listener's clients prove who they are.
type Authentication string

// Authentications, as KairoCluster's spec.security.listeners spells them.
const (
	AuthNone  Authentication = "none"
	AuthSCRAM Authentication = "scram-sha-512"
	AuthTLS   Authentication = "tls"
)

// ParseAuthentication reads a --*-authentication flag; "" is none.
func ParseAuthentication(s string) (Authentication, error) {
	switch a := Authentication(s); a {
	case "":
		return AuthNone, nil
	case AuthNone, AuthSCRAM, AuthTLS:
		return a, nil
	}
	return "", fmt.Errorf("authentication %q: want none, scram-sha-512 or tls", s)
}

// Listener is the security of one client listener.
type Listener struct {
	// Authentication required of every client; AuthNone takes anonymous
	// clients (and still recognises the operator's certificate).
	Authentication Authentication
	// Authorization checks every request against the users' ACLs.
	Authorization bool
	// Authorizer holds the superusers.
	Authorizer Authorizer
}

// Open reports whether the listener neither authenticates nor
// authorizes: every request goes through as it did before security.
func (l Listener) Open() bool {
	return (l.Authentication == "" || l.Authentication == AuthNone) && !l.Authorization
}

// CertificatePrincipal is who a verified client certificate of the
// cluster CA says its holder is: the operator (kairolog-operator), or the
// user its common name names (kairolog-user). A broker's certificate, or
// one of no known role, names nobody on a client listener.
func CertificatePrincipal(state *tls.ConnectionState) (Principal, bool) {
	if state == nil || len(state.VerifiedChains) == 0 || len(state.PeerCertificates) == 0 {
		return Principal{}, false
	}
	leaf := state.PeerCertificates[0]
	switch pki.Role(leaf) {
	case pki.OrgOperator:
		return Principal{Name: leaf.Subject.CommonName, Operator: true}, true
	case pki.OrgUser:
		if leaf.Subject.CommonName == "" {
			return Principal{}, false
		}
		return Principal{Name: leaf.Subject.CommonName}, true
	}
	return Principal{}, false
}
