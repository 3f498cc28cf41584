package nodeagent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// serviceProxy is kube-proxy's old userspace mode: for every TCP port of
// every Service with a ClusterIP it listens on ClusterIP:port and forwards
// each connection to a ready endpoint, round-robin. A Service without ready
// endpoints resets connections, as kube-proxy's REJECT rule does.
//
// It listens inside a network namespace of its own (ns), whose lo holds the
// whole Service range; pods and the machine route the range to that
// namespace's address on the bridge. So a ClusterIP port never takes a
// socket on the machine, and a process there listening on *:8080 does not
// stop the Service on port 8080. Backends are dialled from the node, which
// reaches every pod and kube-apiserver across the bridge.
type serviceProxy struct {
	log *slog.Logger
	ns  *podNetNS // nil listens in the node's own namespace (unit tests)
	// apiserver is where default/kubernetes forwards: that Service has no
	// selector, and the pod-based view of serviceEndpoints cannot see the
	// Endpoints kube-apiserver publishes for itself.
	apiserver string

	mu        sync.Mutex
	listeners map[string]*proxyListener // "ip:port" → listener
	backends  map[string][]string       // "ip:port" → ready "podIP:targetPort"
	next      map[string]int
}

type proxyListener struct {
	l       net.Listener
	service string
}

func newServiceProxy(log *slog.Logger, apiserver string, ns *podNetNS) *serviceProxy {
	return &serviceProxy{log: log, apiserver: apiserver, ns: ns,
		listeners: map[string]*proxyListener{}, backends: map[string][]string{}, next: map[string]int{}}
}

// proxyTable computes, for every Service port, its frontend and ready backends.
func proxyTable(svcs []*corev1.Service, pods []*corev1.Pod, apiserver string) map[string][]string {
	table := map[string][]string{}
	for _, svc := range svcs {
		ip := svc.Spec.ClusterIP
		if ip == "" || ip == corev1.ClusterIPNone {
			continue
		}
		eps := serviceEndpoints(svc, pods)
		for _, sp := range svc.Spec.Ports {
			if sp.Protocol != "" && sp.Protocol != corev1.ProtocolTCP {
				continue
			}
			front := net.JoinHostPort(ip, strconv.Itoa(int(sp.Port)))
			var backs []string
			if svc.Namespace == "default" && svc.Name == "kubernetes" && len(svc.Spec.Selector) == 0 {
				backs = []string{apiserver}
			}
			for _, ep := range eps {
				if !ep.ready {
					continue
				}
				port, err := resolvePort(sp.TargetPort, podPorts(ep.pod))
				if err != nil || port == 0 {
					if sp.TargetPort.IntVal == 0 && sp.TargetPort.StrVal == "" {
						port = int(sp.Port)
					} else {
						continue
					}
				}
				backs = append(backs, net.JoinHostPort(ep.ip, strconv.Itoa(port)))
			}
			table[front] = backs
		}
	}
	return table
}

func podPorts(p *corev1.Pod) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, c := range p.Spec.Containers {
		out = append(out, c.Ports...)
	}
	return out
}

// sync opens and closes listeners to match the Services and pods.
func (p *serviceProxy) sync(svcs []*corev1.Service, pods []*corev1.Pod) {
	table := proxyTable(svcs, pods, p.apiserver)
	names := map[string]string{}
	for _, svc := range svcs {
		for _, sp := range svc.Spec.Ports {
			names[net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(sp.Port)))] = svc.Namespace + "/" + svc.Name
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backends = table
	for front, pl := range p.listeners {
		if _, ok := table[front]; !ok {
			_ = pl.l.Close()
			delete(p.listeners, front)
		}
	}
	for front := range table {
		if _, ok := p.listeners[front]; ok {
			continue
		}
		var l net.Listener
		err := p.ns.do(func() (err error) { l, err = net.Listen("tcp", front); return err })
		if err != nil {
			p.log.Error("Failed to open service port", "service", names[front], "address", front, "err", err)
			continue
		}
		pl := &proxyListener{l: l, service: names[front]}
		p.listeners[front] = pl
		go p.serve(front, pl)
	}
}

// pick returns the next ready backend of front, or "" when there is none.
func (p *serviceProxy) pick(front string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	backs := p.backends[front]
	if len(backs) == 0 {
		return ""
	}
	i := p.next[front] % len(backs)
	p.next[front] = i + 1
	return backs[i]
}

func (p *serviceProxy) serve(front string, pl *proxyListener) {
	for {
		c, err := pl.l.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				p.log.Error("Service port stopped accepting", "service", pl.service, "err", err)
			}
			return
		}
		go p.forward(front, c)
	}
}

func (p *serviceProxy) forward(front string, c net.Conn) {
	defer c.Close()
	// Try each ready backend once, like kube-proxy's userspace retries.
	tried := map[string]bool{}
	for {
		back := p.pick(front)
		if back == "" || tried[back] {
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // reset, not a clean close
			}
			return
		}
		tried[back] = true
		b, err := net.DialTimeout("tcp", back, 3*time.Second)
		if err != nil {
			continue
		}
		splice(c, b)
		return
	}
}

// splice copies both ways until either side is done.
func splice(a, b net.Conn) {
	defer b.Close()
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}

// close stops every listener.
func (p *serviceProxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for front, pl := range p.listeners {
		_ = pl.l.Close()
		delete(p.listeners, front)
	}
}

// run keeps the proxy in sync whenever changed fires, until ctx ends.
func (p *serviceProxy) run(ctx context.Context, changed <-chan struct{}, list func() ([]*corev1.Service, []*corev1.Pod)) {
	defer p.close()
	for {
		svcs, pods := list()
		p.sync(svcs, pods)
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}
