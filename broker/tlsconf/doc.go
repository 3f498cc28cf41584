// Package tlsconf turns a broker's certificate files into the TLS of its
// listeners and of the transports between brokers.
//
// Files holds the paths the operator mounts (--tls-cert-file,
// --tls-key-file, --tls-ca-file); Load reads them into Material: the
// broker's certificate and the CAs it trusts (during a CA renewal both the
// old and the new CA, so brokers holding certificates of either still talk).
//
// Between brokers (the peer listener and the raft transport) TLS is mutual
// and admits only broker certificates (pki.OrgBroker) of a trusted CA, in
// one of three modes (Mode): off, permissive and required. Permissive is the
// step of a rolling change between the other two: its listeners take TLS
// and plain connections on one port (the first byte of a TLS connection is
// a handshake record, 0x16, which neither HTTP nor raft's protocol ever
// starts with), and it dials TLS first, falling back to plain only when
// the other side answers without TLS — a broker not yet restarted. Required
// listens and dials TLS only.
//
// Peer certificates are checked against the trusted CAs and their role,
// not a host name: every broker certificate is equally trusted on these
// transports, and raft dials the voter addresses fixed at bootstrap, which
// may be IP addresses.
package tlsconf
