package kafka

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/kairolog/kairolog/broker/auth"
	"github.com/kairolog/kairolog/broker/memory"
)

// Defaults of Options, Kafka's where Kafka has the setting.
const (
	// DefaultMaxRequestBytes is socket.request.max.bytes: 100 MiB.
	DefaultMaxRequestBytes = 100 << 20
	// DefaultIdleTimeout is connections.max.idle.ms: 10 minutes.
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultIOTimeout is client.io.timeout.ms: 30 s.
	DefaultIOTimeout = 30 * time.Second
	// DefaultMemoryBytes is the request pool of a Server given none.
	DefaultMemoryBytes = 256 << 20
)

// Options configure a Server.
type Options struct {
	Logger *slog.Logger
	// Core answers every request but ApiVersions.
	Core Core
	// Mode says which listener this is: the Kafka listener or the gateway.
	Mode Mode
	// Advertised is where clients reach this listener; the gateway's
	// Metadata names it as the one broker.
	Advertised string
	// RequestContext, when set, derives every request's context: the
	// Kafka listener marks its requests for the core to answer locally
	// (core.Local), the gateway leaves them to be passed on.
	RequestContext func(context.Context) context.Context
	// NodeID is this broker's id, and ClusterID returns the cluster's id
	// once the metadata has it: the identity ApiVersions v5 checks a
	// client's expectation against.
	NodeID    int32
	ClusterID func() string
	// Memory is the pool request frames, and what they decode to, are
	// charged to (queued.max.request.bytes); nil = a pool of its own of
	// DefaultMemoryBytes.
	Memory *memory.Pool
	// MaxRequestBytes is socket.request.max.bytes: a larger frame closes
	// its connection.
	MaxRequestBytes int32
	// IdleTimeout closes a connection that sends nothing for so long
	// (connections.max.idle.ms).
	IdleTimeout time.Duration
	// IOTimeout bounds reading one frame once its size has arrived, and
	// writing one reply (client.io.timeout.ms), and a TLS handshake.
	IOTimeout time.Duration
	// TLS, when set, serves the listener over TLS (Kafka's SSL and
	// SASL_SSL listeners); client certificates it verifies may name the
	// principal (security.go).
	TLS *tls.Config
	// Security is the listener's authentication and authorization: who
	// must prove what before any request runs, and whether every request
	// is checked against the users' ACLs.
	Security auth.Listener
	// Users finds a user of the metadata quorum by name: SASL checks
	// passwords against its SCRAM credential, authorization its ACLs.
	Users func(name string) *auth.User
}

// Server is a Kafka listener's connections.
type Server struct {
	opts Options
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc

	// passwords remembers the PLAIN passwords that verified.
	passwords auth.PasswordCache

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	closed    bool
	wg        sync.WaitGroup
}

// New returns a Server with opts' zero fields set to their defaults.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.Memory == nil {
		opts.Memory = memory.NewPool("queued.max.request.bytes", DefaultMemoryBytes, 0)
	}
	if opts.ClusterID == nil {
		opts.ClusterID = func() string { return "" }
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.IOTimeout <= 0 {
		opts.IOTimeout = DefaultIOTimeout
	}
	if opts.Users == nil {
		opts.Users = func(string) *auth.User { return nil }
	}
	if opts.Security.Authorization {
		opts.Core = authorizing{Core: opts.Core, sec: opts.Security, users: opts.Users}
	}
	s := &Server{opts: opts, log: opts.Logger, listeners: map[net.Listener]struct{}{}, conns: map[net.Conn]struct{}{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// ErrServerClosed is what Serve returns once Close was called.
var ErrServerClosed = errors.New("kafka: server closed")

// Serve accepts connections on ln until Close, and returns
// ErrServerClosed then, or the error that stopped accepting.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	var pause time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.ctx.Err() != nil {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Out of file descriptors and the like: wait, as net/http does.
				pause = min(max(2*pause, 5*time.Millisecond), time.Second)
				time.Sleep(pause)
				continue
			}
			return err
		}
		pause = 0
		if s.opts.TLS != nil {
			nc = tls.Server(nc, s.opts.TLS)
		}
		if !s.track(nc) {
			nc.Close()
			return ErrServerClosed
		}
		go func() {
			defer s.untrack(nc)
			c := &conn{s: s, nc: nc, br: bufio.NewReaderSize(nc, 64<<10)}
			c.serve(s.ctx)
		}()
	}
}

func (s *Server) track(nc net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[nc] = struct{}{}
	s.wg.Add(1)
	return true
}

func (s *Server) untrack(nc net.Conn) {
	s.mu.Lock()
	delete(s.conns, nc)
	s.mu.Unlock()
	s.wg.Done()
}

// Close stops accepting, closes every connection and waits for their
// requests to end.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for ln := range s.listeners {
		ln.Close()
	}
	for nc := range s.conns {
		nc.Close()
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}
