// Package pki issues and reads the certificates of a KairoLog cluster: the
// cluster CA, the brokers' certificates (for their client listeners and for
// the mutual TLS between brokers), the operator's client certificate and
// the client certificates of KairoUsers, all ECDSA P-256.
//
// A certificate's role is its subject's organization: brokers carry
// OrgBroker, the operator OrgOperator, users OrgUser. The peer listener and
// the raft transport admit only OrgBroker certificates, so a user's client
// certificate, issued by the same CA, never reaches them. The principal a
// client certificate authenticates as is its common name.
//
// Parsing (ParseCertificates, ParseAuthority) takes any bytes: a Secret a
// user supplies, or a file, may hold anything, and a bad one is an error,
// never a panic.
package pki
