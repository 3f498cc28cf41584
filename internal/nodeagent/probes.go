package nodeagent

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// probeTarget is what a probe runs against: the pod's address, the
// container's declared ports (for named ports), and, for exec probes, the
// process whose namespaces the command enters.
type probeTarget struct {
	podIP string
	ports []corev1.ContainerPort
	pid   int
	env   []string
	user  *containerUser
}

// probeDefaults fills the Kubernetes API defaults for zero fields.
func probeDefaults(p *corev1.Probe) corev1.Probe {
	out := *p
	if out.TimeoutSeconds == 0 {
		out.TimeoutSeconds = 1
	}
	if out.PeriodSeconds == 0 {
		out.PeriodSeconds = 10
	}
	if out.SuccessThreshold == 0 {
		out.SuccessThreshold = 1
	}
	if out.FailureThreshold == 0 {
		out.FailureThreshold = 3
	}
	return out
}

// runProbe runs one probe attempt and returns nil on success or the failure
// the kubelet would put into its Unhealthy event.
func runProbe(ctx context.Context, p *corev1.Probe, t probeTarget) error {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(probeDefaults(p).TimeoutSeconds)*time.Second)
	defer cancel()
	switch {
	case p.HTTPGet != nil:
		return httpProbe(ctx, p.HTTPGet, t)
	case p.TCPSocket != nil:
		port, err := resolvePort(p.TCPSocket.Port, t.ports)
		if err != nil {
			return err
		}
		host := p.TCPSocket.Host
		if host == "" {
			host = t.podIP
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return c.Close()
	case p.GRPC != nil:
		return grpcProbe(ctx, p.GRPC, t)
	case p.Exec != nil:
		return execProbe(ctx, p.Exec, t)
	}
	return fmt.Errorf("probe has no handler")
}

func httpProbe(ctx context.Context, h *corev1.HTTPGetAction, t probeTarget) error {
	port, err := resolvePort(h.Port, t.ports)
	if err != nil {
		return err
	}
	host := h.Host
	if host == "" {
		host = t.podIP
	}
	scheme := strings.ToLower(string(h.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := h.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port))}
	u, err = u.Parse(path)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "kube-probe/1.37")
	req.Header.Set("Accept", "*/*")
	for _, hd := range h.HTTPHeaders {
		if strings.EqualFold(hd.Name, "host") {
			req.Host = hd.Value
			continue
		}
		req.Header.Add(hd.Name, hd.Value)
	}
	resp, err := probeHTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("HTTP probe failed with statuscode: %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

// probeHTTPClient does not follow redirects off the pod and, like the
// kubelet, does not verify HTTPS certificates.
var probeHTTPClient = &http.Client{
	Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // kubelet probes skip verification too
		DisableKeepAlives: true,
	},
	CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return http.ErrUseLastResponse
		}
		return nil
	},
}

func grpcProbe(ctx context.Context, g *corev1.GRPCAction, t probeTarget) error {
	conn, err := grpc.NewClient(net.JoinHostPort(t.podIP, strconv.Itoa(int(g.Port))),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	service := ""
	if g.Service != nil {
		service = *g.Service
	}
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		return err
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("service unhealthy (responded with %q)", resp.GetStatus())
	}
	return nil
}

// execProbe runs the command inside the container's mount, UTS and network
// namespaces through nsenter, with the container's environment.
func execProbe(ctx context.Context, e *corev1.ExecAction, t probeTarget) error {
	if len(e.Command) == 0 {
		return fmt.Errorf("exec probe has no command")
	}
	cmd := exec.CommandContext(ctx, "nsenter", append(nsenterArgs(t.pid, t.user), e.Command...)...)
	cmd.Env = t.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("command %q failed: %v: %s", strings.Join(e.Command, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// resolvePort turns a probe or Service target port into a number, looking
// named ports up among the container's ports.
func resolvePort(p intstr.IntOrString, ports []corev1.ContainerPort) (int, error) {
	if p.Type == intstr.Int {
		if p.IntVal <= 0 || p.IntVal > 65535 {
			return 0, fmt.Errorf("invalid port %d", p.IntVal)
		}
		return int(p.IntVal), nil
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return n, nil
	}
	for _, cp := range ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("no container port named %q", p.StrVal)
}

// probeState tracks consecutive results against a probe's thresholds.
type probeState struct {
	probe     corev1.Probe
	successes int32
	failures  int32
}

// record adds one result and returns whether the probe now counts as
// passing, and whether that verdict changed.
func (s *probeState) record(ok bool, wasPassing bool) (passing bool, changed bool) {
	if ok {
		s.successes++
		s.failures = 0
	} else {
		s.failures++
		s.successes = 0
	}
	passing = wasPassing
	switch {
	case ok && s.successes >= s.probe.SuccessThreshold:
		passing = true
	case !ok && s.failures >= s.probe.FailureThreshold:
		passing = false
	}
	return passing, passing != wasPassing
}
