package pki

import "crypto/x509"

// Organizations that say what a certificate is for.
const (
	// OrgBroker marks a broker's certificate, the only kind the peer
	// listener and the raft transport admit.
	OrgBroker = "kairolog-broker"
	// OrgOperator marks the operator's client certificate, a superuser
	// on every listener.
	OrgOperator = "kairolog-operator"
	// OrgUser marks a KairoUser's client certificate.
	OrgUser = "kairolog-user"
)

// OperatorName is the common name of the operator's certificate and so the
// principal it authenticates as.
const OperatorName = "kairolog-operator"

// Role is the organization of cert's subject that names its role, or "".
func Role(cert *x509.Certificate) string {
	for _, o := range cert.Subject.Organization {
		switch o {
		case OrgBroker, OrgOperator, OrgUser:
			return o
		}
	}
	return ""
}

// IsBroker reports whether cert is a broker's certificate.
func IsBroker(cert *x509.Certificate) bool { return Role(cert) == OrgBroker }
