package nodeagent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
)

// The kubelet API is what kube-apiserver calls for `kubectl logs` and
// `kubectl port-forward`. It is served over HTTPS with the cluster CA and
// only answers clients whose certificate the CA signed and whose identity is
// allowed (kube-apiserver's kubelet client, or a cluster admin).

// kubeletServer builds the TLS server for the kubelet API.
func (a *Agent) kubeletServer() (*http.Server, error) {
	cert, err := tls.X509KeyPair(a.cfg.ServingCertPEM, a.cfg.ServingKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("kubelet serving certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(a.cfg.ClientCAPEM) {
		return nil, fmt.Errorf("kubelet client CA: no certificate found")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	api.AttachPodRoutes(api.PodHandlerConfig{
		GetContainerLogs:      a.containerLogs,
		RunInContainer:        a.containerExec,
		PortForward:           a.portForward,
		GetPods:               a.provider.GetPods,
		GetPodsFromKubernetes: a.provider.GetPods,
		StreamIdleTimeout:     4 * time.Hour,
		StreamCreationTimeout: 30 * time.Second,
	}, mux, false)
	return &http.Server{
		Handler: a.authorize(mux),
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{cert},
			ClientCAs:    pool,
			ClientAuth:   tls.RequireAndVerifyClientCert,
			MinVersion:   tls.VersionTLS12,
		},
		ReadHeaderTimeout: 10 * time.Second,
	}, nil
}

// authorize admits the identities in Config.KubeletClients and members of
// system:masters; everyone else gets 403, as the kubelet's webhook
// authorizer would answer without nodes/proxy rights.
func (a *Agent) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			next.ServeHTTP(w, r)
			return
		}
		if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		subject := r.TLS.PeerCertificates[0].Subject
		if slices.Contains(a.cfg.KubeletClients, subject.CommonName) || slices.Contains(subject.Organization, "system:masters") {
			next.ServeHTTP(w, r)
			return
		}
		http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=nodes, subresource=proxy)", subject.CommonName, r.Method), http.StatusForbidden)
	})
}

// containerLogs serves /containerLogs/{namespace}/{pod}/{container}.
func (a *Agent) containerLogs(ctx context.Context, namespace, pod, container string, o api.ContainerLogOpts) (io.ReadCloser, error) {
	pr, err := a.provider.runtimeFor(namespace, pod)
	if err != nil {
		return nil, err
	}
	var c *containerRuntime
	for _, cr := range append(append([]*containerRuntime{}, pr.initContainers...), pr.containers...) {
		if cr.spec.Name == container {
			c = cr
		}
	}
	if c == nil {
		return nil, errdefs.NotFoundf("container %s is not valid for pod %s", container, pod)
	}
	pr.mu.Lock()
	path, running, everStarted, restarts := c.logPath, c.runDone, c.everStarted, c.restarts
	if c.proc == nil {
		running = nil
	}
	pr.mu.Unlock()
	if !everStarted || path == "" {
		return nil, errdefs.InvalidInputf("container %q in pod %q is waiting to start", container, pod)
	}
	if o.Previous {
		// Run k logs to k.log and k is the restart count while it runs (or
		// waits in back-off after it), so the run before is restarts-1.
		if restarts == 0 {
			return nil, errdefs.InvalidInputf("previous terminated container %q in pod %q not found", container, pod)
		}
		path = filepath.Join(filepath.Dir(path), strconv.Itoa(int(restarts)-1)+".log")
		running = nil
	}
	opts := logOptions{Tail: -1, LimitBytes: o.LimitBytes, Timestamps: o.Timestamps, Follow: o.Follow && running != nil}
	if o.Tail > 0 {
		opts.Tail = o.Tail
	}
	switch {
	case !o.SinceTime.IsZero():
		opts.Since = o.SinceTime
	case o.SinceSeconds > 0:
		opts.Since = time.Now().Add(-time.Duration(o.SinceSeconds) * time.Second)
	}
	if running == nil {
		closed := make(chan struct{})
		close(closed)
		running = closed
	}
	return openLogs(ctx, path, opts, running)
}

// portForward serves one stream of /portForward/{namespace}/{pod}: a TCP
// connection to localhost:port inside the pod's network namespace, exactly
// as containerd dials it. A process that listens only on its pod IP cannot
// be reached this way, here as on a real cluster.
func (a *Agent) portForward(ctx context.Context, namespace, pod string, port int32, stream io.ReadWriteCloser) error {
	pr, err := a.provider.runtimeFor(namespace, pod)
	if err != nil {
		return err
	}
	if pr.snapshot().Status.Phase != corev1.PodRunning {
		return fmt.Errorf("pod %s/%s is not running", namespace, pod)
	}
	conn, err := dialInPod(ctx, pr.network(), int(port))
	if err != nil {
		return err
	}
	defer conn.Close()
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(conn, stream)
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(stream, conn)
		done <- struct{}{}
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	_ = stream.Close()
	return nil
}

// dialInPod connects to localhost:port in the pod's network namespace (the
// node's for a hostNetwork pod): IPv4 first, then IPv6, one after the other,
// because Go's parallel dialing would open the second socket on another
// thread, outside the namespace.
func dialInPod(ctx context.Context, ns *podNetNS, port int) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var conn net.Conn
	err := ns.do(func() error {
		var d net.Dialer
		var err4, err6 error
		if conn, err4 = d.DialContext(ctx, "tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err4 == nil {
			return nil
		}
		if conn, err6 = d.DialContext(ctx, "tcp6", net.JoinHostPort("::1", strconv.Itoa(port))); err6 == nil {
			return nil
		}
		return fmt.Errorf("failed to connect to localhost:%d inside the pod's network namespace, IPv4: %v IPv6: %v", port, err4, err6)
	})
	return conn, err
}
