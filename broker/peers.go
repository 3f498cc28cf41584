package broker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/peer"
)

// peers caches one forwarding client per broker: the client API's calls,
// sent over the peer transport to the broker's peer listener
// (peer.ForwardURL) with the cluster secret.
type peers struct {
	transport *peer.Client
	mu        sync.Mutex
	clients   map[string]*client.Client
}

func newPeers(transport *peer.Client) *peers {
	return &peers{transport: transport, clients: map[string]*client.Client{}}
}

// peer returns the forwarding client for broker id.
func (b *Broker) peer(id int32) (*client.Client, error) {
	addr, err := b.peerAddress(id)
	if err != nil {
		return nil, err
	}
	return b.peers.get(addr)
}

// peerAddress is where broker id's peer listener is.
func (b *Broker) peerAddress(id int32) (string, error) {
	br := b.image().Broker(int(id))
	if br == nil || br.PeerAddress == "" {
		return "", leaderNotAvailable("broker %d has no known peer address", id)
	}
	return br.PeerAddress, nil
}

func (p *peers) get(addr string) (*client.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[addr]; ok {
		return c, nil
	}
	c, err := client.New(peer.ForwardURL(addr), client.WithHTTPClient(p.transport.HTTPClient()),
		client.WithUserAgent("kairolog-broker"))
	if err != nil {
		return nil, fmt.Errorf("broker peer address %q: %w", addr, err)
	}
	p.clients[addr] = c
	return c, nil
}

// withEpoch is c sending the leader epoch this broker saw for the
// partition a forwarded request is about.
func withEpoch(c *client.Client, epoch int32) *client.Client {
	return c.WithHeader(peer.HeaderLeaderEpoch, strconv.Itoa(int(epoch)))
}

func (p *peers) close() { p.transport.Close() }

// peerError turns a failure to reach broker id (it stopped, the connection
// broke) into code, a retriable 503 of the request being proxied, instead of
// an internal error; an answer the peer gave and the caller's own deadline
// pass through.
func peerError(err error, code string, id int32) error {
	if client.IsCode(err, api.CodeUnauthenticated) {
		// A deployment fault, not the client's: the brokers hold different
		// cluster secrets. Retriable, as the brokers are being fixed.
		e := client.Errorf(code, "broker %d refused this broker's cluster secret: %v", id, err)
		e.RetryAfterMs = 1000
		return e
	}
	var ce *client.Error
	if err == nil || errors.As(err, &ce) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	e := client.Errorf(code, "broker %d did not answer: %v", id, err)
	e.RetryAfterMs = 500
	return e
}

// peerAnswer is what a peer operation of this package answers for err: the
// *api.Error the client API would answer, so a proxied view fails with
// the code a local one would. An error without a code is left for the Mux
// to answer as INTERNAL (a bug).
func peerAnswer(err error) error {
	if err == nil {
		return nil
	}
	err = apiError(err)
	var ae *api.Error
	if errors.As(err, &ae) {
		return ae
	}
	return err
}
