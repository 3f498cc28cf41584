package brokertest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/kairolog/kairolog/broker/client"
)

// serviceProxy stands in for the client Service: it forwards each request
// to a ready broker, taking them in turn, and tries the next one when a
// broker cannot be reached.
type serviceProxy struct {
	c     *Cluster
	ln    net.Listener
	srv   *http.Server
	httpc *http.Client
	next  atomic.Uint64
}

// ServiceURL is an HTTP endpoint that forwards to the cluster's ready
// brokers, as the client Service does (only ready endpoints; when none is
// ready it tries running ones). It starts on first use and stops with
// Close.
func (c *Cluster) ServiceURL() string {
	c.proxyOnce.Do(func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic("brokertest: service endpoint: " + err.Error())
		}
		p := &serviceProxy{c: c, ln: ln, httpc: &http.Client{Transport: client.NewTransport()}}
		p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = p.srv.Serve(ln) }()
		c.proxy = p
	})
	return "http://" + c.proxy.ln.Addr().String()
}

// ServiceClient is a broker API client on ServiceURL.
func (c *Cluster) ServiceClient() *client.Client {
	cl, err := client.New(c.ServiceURL(), client.WithTimeout(10*time.Second))
	if err != nil {
		panic(err)
	}
	return cl
}

func (p *serviceProxy) close() { _ = p.srv.Close() }

// backends are the brokers to try, ready ones first, starting from the
// next in turn.
func (p *serviceProxy) backends() []*proc {
	p.c.mu.Lock()
	procs := append([]*proc(nil), p.c.brokers...)
	p.c.mu.Unlock()
	n := len(procs)
	if n == 0 {
		return nil
	}
	start := int(p.next.Add(1) % uint64(n))
	var ready, running []*proc
	for k := 0; k < n; k++ {
		b := procs[(start+k)%n]
		b.mu.Lock()
		r, up := b.ready, b.running()
		b.mu.Unlock()
		switch {
		case up && r:
			ready = append(ready, b)
		case up:
			running = append(running, b)
		}
	}
	if len(ready) > 0 {
		return ready
	}
	return running
}

func (p *serviceProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	lastErr := errors.New("no broker is running")
	for _, b := range p.backends() {
		out, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+b.address()+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := p.httpc.Do(out)
		if err != nil {
			lastErr = err
			// A broker that stopped between the probe and now refuses the
			// connection: as with a Service whose endpoint just went away,
			// try another. A request that may have reached a broker is not
			// sent twice.
			var op *net.OpError
			if r.Context().Err() == nil && errors.As(err, &op) && op.Op == "dial" {
				continue
			}
			break
		}
		for k, vs := range resp.Header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		resp.Body.Close()
		return
	}
	http.Error(w, "no ready broker behind the service: "+lastErr.Error(), http.StatusBadGateway)
}
