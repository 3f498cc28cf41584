package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/kairolog/kairolog/broker/client"
)

// peers caches one forwarding client per broker address, sharing one
// keep-alive transport.
type peers struct {
	mu      sync.Mutex
	http    *http.Client
	clients map[string]*client.Client
}

func newPeers() *peers {
	return &peers{http: &http.Client{Transport: client.NewTransport()}, clients: map[string]*client.Client{}}
}

// peer returns a client for broker id whose requests are marked forwarded.
func (b *Broker) peer(id int32) (*client.Client, error) {
	br := b.image().Broker(int(id))
	if br == nil || br.HTTPAddress == "" {
		return nil, leaderNotAvailable("broker %d has no known address", id)
	}
	return b.peers.get(br.HTTPAddress)
}

func (p *peers) get(addr string) (*client.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[addr]; ok {
		return c, nil
	}
	c, err := client.New(addr, client.WithHTTPClient(p.http), client.Forwarded(), client.WithUserAgent("kairolog-broker"))
	if err != nil {
		return nil, fmt.Errorf("broker address %q: %w", addr, err)
	}
	p.clients[addr] = c
	return c, nil
}

func (p *peers) close() { p.http.CloseIdleConnections() }

// peerError turns a failure to reach broker id (it stopped, the connection
// broke) into code, a retriable 503 of the request being proxied, instead of
// an internal error; an answer the peer gave and the caller's own deadline
// pass through.
func peerError(err error, code string, id int32) error {
	var ce *client.Error
	if err == nil || errors.As(err, &ce) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	e := client.Errorf(code, "broker %d did not answer: %v", id, err)
	e.RetryAfterMs = 500
	return e
}
