package tlsconf

import (
	"bufio"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"
)

// tlsHandshakeRecord is the first byte of every TLS connection.
const tlsHandshakeRecord = 0x16

// sniffTimeout bounds how long a new connection may stay silent before it
// is dropped: the listener's Accept does not wait for it meanwhile.
const sniffTimeout = 10 * time.Second

// sniffListener hands out TLS and plain connections from one port, told
// apart by their first byte. Each accepted connection is read in its own
// goroutine, so a silent one holds up no other.
type sniffListener struct {
	net.Listener
	conf  *tls.Config
	conns chan net.Conn
	errs  chan error
	done  chan struct{}
	once  sync.Once
}

func newSniffListener(ln net.Listener, conf *tls.Config) *sniffListener {
	s := &sniffListener{Listener: ln, conf: conf, conns: make(chan net.Conn), errs: make(chan error, 1),
		done: make(chan struct{})}
	go s.acceptLoop()
	return s
}

func (s *sniffListener) acceptLoop() {
	for {
		c, err := s.Listener.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			select {
			case s.errs <- err:
			case <-s.done:
			}
			return
		}
		go s.classify(c)
	}
}

func (s *sniffListener) classify(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(sniffTimeout))
	br := bufio.NewReaderSize(c, 1)
	first, err := br.Peek(1)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		c.Close()
		return
	}
	var out net.Conn = &peekedConn{Conn: c, r: br}
	if first[0] == tlsHandshakeRecord {
		out = tls.Server(out, s.conf)
	}
	select {
	case s.conns <- out:
	case <-s.done:
		c.Close()
	}
}

// Accept returns the next classified connection.
func (s *sniffListener) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case err := <-s.errs:
		return nil, err
	case <-s.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting and drops connections not yet handed out.
func (s *sniffListener) Close() error {
	s.once.Do(func() { close(s.done) })
	return s.Listener.Close()
}

// peekedConn reads the bytes buffered while sniffing first.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
