package kafka

import (
	"context"
	"net"

	"github.com/kairolog/kairolog/broker/auth"
)

// identity is who a connection's requests come from: the principal its
// TLS certificate or SASL exchange authenticated (anonymous otherwise) and
// the host it connects from, which ACL rules may name.
type identity struct {
	principal auth.Principal
	host      string
}

type identityKey struct{}

// withIdentity marks ctx as serving requests of id.
func withIdentity(ctx context.Context, id identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// identityOf is the identity withIdentity put on ctx; anonymous from no
// host when there is none.
func identityOf(ctx context.Context) identity {
	id, _ := ctx.Value(identityKey{}).(identity)
	return id
}

// remoteHost is the IP address of a connection's peer, as ACL rules name
// hosts.
func remoteHost(nc net.Conn) string {
	addr := nc.RemoteAddr()
	if addr == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	return host
}
