package cluster

import (
	"context"
	"net"
	"time"

	"github.com/hashicorp/raft"

	"github.com/kairolog/kairolog/broker/tlsconf"
)

// streamLayer is raft's TCP stream layer with an advertised address that
// may be a DNS name (a StatefulSet pod's stable name), which raft's own
// TCP transport does not allow, and mutual TLS between brokers when tls
// is set: its Listener is then already wrapped by tls.Listener.
type streamLayer struct {
	net.Listener
	advertise advertisedAddr
	tls       *tlsconf.Transport
}

type advertisedAddr string

func (a advertisedAddr) Network() string { return "tcp" }
func (a advertisedAddr) String() string  { return string(a) }

func (s *streamLayer) Addr() net.Addr { return s.advertise }

func (s *streamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	if s.tls.Plain() {
		return net.DialTimeout("tcp", string(address), timeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.tls.DialContext(ctx, "tcp", string(address))
}
