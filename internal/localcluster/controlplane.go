package localcluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kairolog/kairolog/internal/heldport"
	"github.com/kairolog/kairolog/internal/localcluster/childproc"
)

// stopGrace is how long a control-plane process gets between SIGTERM and SIGKILL.
const stopGrace = 5 * time.Second

// component is one control-plane process.
type component struct {
	name    string
	binary  string
	args    []string
	healthz string       // URL answering 200 once the process serves
	client  *http.Client // for healthz
	logPath string
	proc    *childproc.Process
}

// start launches the process; wait for health separately with waitHealthy.
func (c *component) start(env []string) error {
	if _, err := os.Stat(c.binary); err != nil {
		return fmt.Errorf("%s: %w (run hack/build-k8s-binaries.sh)", c.name, err)
	}
	p, err := childproc.Launch(c.name, c.binary, c.args, env, c.logPath)
	if err != nil {
		return err
	}
	c.proc = p
	return nil
}

// waitHealthy polls healthz until it answers 200, the process exits, or ctx ends.
func (c *component) waitHealthy(ctx context.Context) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.healthz, nil)
		resp, err := c.client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not become healthy (see %s): %w", c.name, c.logPath, ctx.Err())
		case <-c.proc.Done():
			return fmt.Errorf("%s exited during start-up: %v; last log lines:\n%s", c.name, c.proc.Err(), tailFile(c.logPath, 15))
		case <-tick.C:
		}
	}
}

func (c *component) stop() {
	if c.proc != nil {
		c.proc.Stop(stopGrace)
	}
}

// controlPlaneLayout is where each process listens and keeps its files.
type controlPlaneLayout struct {
	binDir, logDir, stateDir  string
	ip                        net.IP
	serviceCIDR               *net.IPNet
	etcdClient, etcdPeer      int
	apiserver, kcm, scheduler int
	// held keep the ports above from being given to anyone else (another
	// program's port 0, an outgoing connection) while the cluster runs;
	// the components bind them themselves (heldport.Hold).
	held []*heldport.Bound
}

func newLayout(binDir, stateDir string, ip net.IP, serviceCIDR *net.IPNet) (*controlPlaneLayout, error) {
	l := &controlPlaneLayout{binDir: binDir, stateDir: stateDir, logDir: filepath.Join(stateDir, "logs"), ip: ip, serviceCIDR: serviceCIDR}
	for _, p := range []*int{&l.etcdClient, &l.etcdPeer, &l.apiserver, &l.kcm, &l.scheduler} {
		b, err := heldport.Hold(ip.String())
		if err != nil {
			l.release()
			return nil, err
		}
		l.held = append(l.held, b)
		*p = b.Port()
	}
	return l, os.MkdirAll(l.logDir, 0o755)
}

// release gives the control plane's ports up.
func (l *controlPlaneLayout) release() {
	for _, b := range l.held {
		_ = b.Close()
	}
	l.held = nil
}

func (l *controlPlaneLayout) url(scheme string, port int) string {
	return scheme + "://" + net.JoinHostPort(l.ip.String(), strconv.Itoa(port))
}

func (l *controlPlaneLayout) apiserverURL() string { return l.url("https", l.apiserver) }

func (l *controlPlaneLayout) etcd() *component {
	client, peer := l.url("http", l.etcdClient), l.url("http", l.etcdPeer)
	return &component{
		name:   "etcd",
		binary: filepath.Join(l.binDir, "etcd"),
		args: []string{
			"--name=default",
			"--data-dir=" + filepath.Join(l.stateDir, "etcd"),
			"--listen-client-urls=" + client,
			"--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=default=" + peer,
			// A throwaway cluster: losing the last writes on a machine crash is fine.
			"--unsafe-no-fsync=true",
			"--log-level=warn",
		},
		healthz: client + "/health",
		client:  &http.Client{Timeout: time.Second},
		logPath: filepath.Join(l.logDir, "etcd.log"),
	}
}

func (l *controlPlaneLayout) kubeAPIServer(p *clusterPKI, adminTLS *tls.Config) *component {
	return &component{
		name:   "kube-apiserver",
		binary: filepath.Join(l.binDir, "kube-apiserver"),
		args: []string{
			"--etcd-servers=" + l.url("http", l.etcdClient),
			"--bind-address=" + l.ip.String(),
			"--advertise-address=" + l.ip.String(),
			"--secure-port=" + strconv.Itoa(l.apiserver),
			"--tls-cert-file=" + p.apiserverCert,
			"--tls-private-key-file=" + p.apiserverKey,
			"--client-ca-file=" + p.caPath,
			"--service-cluster-ip-range=" + l.serviceCIDR.String(),
			"--service-account-issuer=" + serviceAccountIssuer,
			"--service-account-key-file=" + p.saPublic,
			"--service-account-signing-key-file=" + p.saPrivate,
			"--authorization-mode=Node,RBAC",
			"--enable-admission-plugins=NodeRestriction",
			"--allow-privileged=true",
			"--requestheader-client-ca-file=" + p.frontProxyCAPath,
			"--requestheader-allowed-names=" + frontProxyClientCN,
			"--requestheader-username-headers=X-Remote-User",
			"--requestheader-group-headers=X-Remote-Group",
			"--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--proxy-client-cert-file=" + p.frontProxyCert,
			"--proxy-client-key-file=" + p.frontProxyKey,
			"--kubelet-client-certificate=" + p.kubeletClientCert,
			"--kubelet-client-key=" + p.kubeletClientKey,
			"--kubelet-certificate-authority=" + p.caPath,
			"--kubelet-preferred-address-types=InternalIP",
			"--enable-priority-and-fairness=false",
			"--profiling=false",
			"--v=1",
		},
		healthz: l.apiserverURL() + "/readyz",
		client:  &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: adminTLS}},
		logPath: filepath.Join(l.logDir, "kube-apiserver.log"),
	}
}

func (l *controlPlaneLayout) kubeControllerManager(p *clusterPKI, kubeconfig string) *component {
	return &component{
		name:   "kube-controller-manager",
		binary: filepath.Join(l.binDir, "kube-controller-manager"),
		args: []string{
			"--kubeconfig=" + kubeconfig,
			"--authentication-kubeconfig=" + kubeconfig,
			"--authorization-kubeconfig=" + kubeconfig,
			"--bind-address=" + l.ip.String(),
			"--secure-port=" + strconv.Itoa(l.kcm),
			"--leader-elect=false",
			"--use-service-account-credentials=true",
			"--service-account-private-key-file=" + p.saPrivate,
			"--root-ca-file=" + p.caPath,
			"--service-cluster-ip-range=" + l.serviceCIDR.String(),
			"--cluster-name=" + contextName,
			"--controllers=*",
			"--profiling=false",
			"--v=1",
		},
		healthz: l.url("https", l.kcm) + "/healthz",
		client:  insecureLoopbackClient(),
		logPath: filepath.Join(l.logDir, "kube-controller-manager.log"),
	}
}

func (l *controlPlaneLayout) kubeScheduler(kubeconfig string) *component {
	return &component{
		name:   "kube-scheduler",
		binary: filepath.Join(l.binDir, "kube-scheduler"),
		args: []string{
			"--kubeconfig=" + kubeconfig,
			"--authentication-kubeconfig=" + kubeconfig,
			"--authorization-kubeconfig=" + kubeconfig,
			"--bind-address=" + l.ip.String(),
			"--secure-port=" + strconv.Itoa(l.scheduler),
			"--leader-elect=false",
			"--profiling=false",
			"--v=1",
		},
		healthz: l.url("https", l.scheduler) + "/healthz",
		client:  insecureLoopbackClient(),
		logPath: filepath.Join(l.logDir, "kube-scheduler.log"),
	}
}

// insecureLoopbackClient probes the health endpoints of the controller-manager
// and the scheduler, which serve a self-signed certificate on our own slot
// address.
func insecureLoopbackClient() *http.Client {
	return &http.Client{Timeout: time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback health probe of our own child
	}}
}

// tailFile returns the last n lines of path, for error messages.
func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
