package localcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kairolog/kairolog/internal/imagebuild"
	"github.com/kairolog/kairolog/internal/nodeagent"
)

// Options configure a local cluster.
type Options struct {
	// StateDir holds everything of the cluster: certificates, etcd data,
	// logs, volumes, pod sandboxes and the admin kubeconfig. It is emptied
	// on start (a directory that is not a previous cluster's is refused).
	StateDir string
	// RepoDir is the repository root, where bin/k8s and bin/images are;
	// found from the working directory when empty.
	RepoDir string
	// BinDir holds etcd and the Kubernetes binaries; RepoDir/bin/k8s when empty.
	BinDir string
	// ImageLayout is the OCI image layout whose images the cluster's
	// registry serves (as docker.io, which the node pulls through it);
	// RepoDir/bin/images/oci, written by `make images`, when empty.
	ImageLayout string
	// BinaryImages, when not nil, turns on the developer fallback: the
	// node runs binaries of this machine for the mapped repositories
	// instead of pulling images (kairolog/broker → RepoDir/bin/broker,
	// kairolog/operator → RepoDir/bin/manager, plus these entries; an entry
	// with only a Binary keeps the default image configuration), and no
	// image layout is needed.
	BinaryImages nodeagent.ImageMap
	// NodeName is the node's name; "kairo-local" when empty.
	NodeName string
	// Progress receives one line per start-up step; nil discards them.
	Progress io.Writer
	// RestartBackoff is the node's first non-zero crash-loop back-off (10s,
	// as a kubelet's, when zero).
	RestartBackoff time.Duration
	// SlotLockDir is where clusters on this machine coordinate their address
	// ranges; os.TempDir()/kairo-local-slots when empty.
	SlotLockDir string
}

// Cluster is a running local cluster.
type Cluster struct {
	opts       Options
	stateLock  *os.File
	slot       *slot
	network    *hostNetwork
	layout     *controlPlaneLayout
	components []*component
	kubeconfig string
	admin      *rest.Config
	nodeName   string
	registry   *imageRegistry

	cancelInProcess context.CancelFunc
	inProcess       sync.WaitGroup
	stopOnce        sync.Once
	closers         []io.Closer
}

// DefaultNodeName is the node's name unless Options.NodeName says otherwise.
const DefaultNodeName = "kairo-local"

// Start brings up a cluster and returns once its node is Ready and the
// default service account exists, so pods can be created right away. On
// error everything started so far is stopped.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	began := time.Now()
	if opts.StateDir == "" {
		return nil, errors.New("localcluster: StateDir is required")
	}
	if opts.StateDir, err = filepath.Abs(opts.StateDir); err != nil {
		return nil, err
	}
	if opts.RepoDir == "" {
		if opts.RepoDir, err = FindRepoDir(); err != nil {
			return nil, err
		}
	}
	if opts.BinDir == "" {
		opts.BinDir = filepath.Join(opts.RepoDir, "bin", "k8s")
	}
	if opts.NodeName == "" {
		opts.NodeName = DefaultNodeName
	}
	if opts.SlotLockDir == "" {
		opts.SlotLockDir = filepath.Join(os.TempDir(), "kairo-local-slots")
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	step := func(format string, args ...any) {
		fmt.Fprintf(progress, "%6.1fs  %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
	}

	c := &Cluster{opts: opts, nodeName: opts.NodeName}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if c.stateLock, err = claimStateDir(opts.StateDir); err != nil {
		return nil, err
	}
	if c.slot, c.network, err = acquireNetwork(opts.SlotLockDir); err != nil {
		return nil, err
	}
	ip := c.slot.nodeIP()
	pki, err := newClusterPKI(filepath.Join(opts.StateDir, "pki"), opts.NodeName, ip, c.slot.kubernetesServiceIP())
	if err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	if c.layout, err = newLayout(opts.BinDir, opts.StateDir, ip, c.slot.serviceCIDR()); err != nil {
		return nil, err
	}
	step("state in %s; node address %s on bridge %s, pods %s, services %s",
		opts.StateDir, ip, c.slot.bridgeName(), c.slot.podCIDR(), c.slot.serviceCIDR())

	server := c.layout.apiserverURL()
	creds := func(kp keyPair) credentials { return credentials{server: server, caPEM: pki.ca.certPEM, client: kp} }
	c.kubeconfig = filepath.Join(opts.StateDir, "kubeconfig")
	c.admin = restConfig(creds(pki.admin))
	kcmConfig := filepath.Join(opts.StateDir, "pki", "controller-manager.kubeconfig")
	schedConfig := filepath.Join(opts.StateDir, "pki", "scheduler.kubeconfig")
	for path, kp := range map[string]keyPair{kcmConfig: pki.controllerManager, schedConfig: pki.scheduler} {
		if err := writeKubeconfig(path, creds(kp)); err != nil {
			return nil, err
		}
	}

	adminTLS, err := tlsConfig(pki.ca.certPEM, pki.admin)
	if err != nil {
		return nil, err
	}
	env := minimalEnv()
	etcd := c.layout.etcd()
	if err := c.startAndWait(ctx, etcd, env); err != nil {
		return nil, err
	}
	step("etcd ready")
	apiserver := c.layout.kubeAPIServer(pki, adminTLS)
	if err := c.startAndWait(ctx, apiserver, env); err != nil {
		return nil, err
	}
	step("kube-apiserver ready at %s", server)

	kcm, sched := c.layout.kubeControllerManager(pki, kcmConfig), c.layout.kubeScheduler(schedConfig)
	for _, comp := range []*component{kcm, sched} {
		if err := comp.start(env); err != nil {
			return nil, err
		}
		c.components = append(c.components, comp)
	}
	admin, err := kubernetes.NewForConfig(c.admin)
	if err != nil {
		return nil, err
	}
	if err := bootstrapObjects(ctx, admin); err != nil {
		return nil, err
	}
	for _, comp := range []*component{kcm, sched} {
		if err := waitHealthy(ctx, comp); err != nil {
			return nil, err
		}
	}
	step("kube-controller-manager and kube-scheduler ready")

	inCtx, cancel := context.WithCancel(context.Background())
	c.cancelInProcess = cancel
	if err := c.startProvisioner(inCtx, creds(pki.provisioner)); err != nil {
		return nil, err
	}
	var images nodeagent.ImageMap
	if opts.BinaryImages != nil {
		images = nodeagent.DefaultImageMap(opts.RepoDir)
		images.Merge(opts.BinaryImages)
		step("developer fallback: images %s run binaries of this machine", strings.Join(images.Repositories(), ", "))
	}
	if err := c.startRegistry(ctx, step); err != nil {
		return nil, err
	}
	agent, err := nodeagent.New(nodeagent.Config{
		NodeName:       opts.NodeName,
		NodeIP:         ip,
		PodCIDR:        c.slot.podCIDR(),
		ServiceCIDR:    c.slot.serviceCIDR(),
		Bridge:         c.slot.bridgeName(),
		RESTConfig:     restConfig(creds(pki.node)),
		ServingCertPEM: pki.kubeletServing.certPEM,
		ServingKeyPEM:  pki.kubeletServing.keyPEM,
		ClientCAPEM:    pki.ca.certPEM,
		KubeletClients: []string{apiserverKubeletCN},
		APIServer:      net.JoinHostPort(ip.String(), strconv.Itoa(c.layout.apiserver)),
		Images:         images,
		ImageMirrors:   map[string]string{"docker.io": c.registry.host},
		StateDir:       opts.StateDir,
		Log:            c.fileLogger("node.log"),
		RestartBackoff: opts.RestartBackoff,
	})
	if err != nil {
		return nil, err
	}
	agentErr := make(chan error, 1)
	c.inProcess.Add(1)
	go func() {
		defer c.inProcess.Done()
		agentErr <- agent.Run(inCtx)
	}()
	select {
	case <-agent.Ready():
	case err := <-agentErr:
		return nil, fmt.Errorf("node agent: %w", err)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := c.waitUsable(ctx, admin); err != nil {
		return nil, err
	}
	step("node %s Ready (kubelet API on %s:%d)", opts.NodeName, ip, agent.KubeletPort())

	if err := writeKubeconfig(c.kubeconfig, creds(pki.admin)); err != nil {
		return nil, err
	}
	step("cluster up; kubeconfig at %s", c.kubeconfig)
	return c, nil
}

// acquireNetwork takes a slot whose address ranges are free on this
// machine and sets up its network, cleaning what a crashed cluster left
// there and on any other slot nobody holds.
func acquireNetwork(lockDir string) (*slot, *hostNetwork, error) {
	var taken []*slot // held until we are done, so the search skips them
	defer func() {
		for _, s := range taken {
			s.release()
		}
	}()
	for {
		s, err := acquireSlot(lockDir)
		if err != nil {
			return nil, nil, err
		}
		network := slotNetwork(s)
		if err := network.checkFree(); err != nil {
			if errors.Is(err, ErrAddressesTaken) {
				taken = append(taken, s)
				continue
			}
			s.release()
			return nil, nil, err
		}
		sweepStaleNetworks(lockDir, s.n)
		if err := network.setup(); err != nil {
			network.teardown()
			s.release()
			return nil, nil, fmt.Errorf("network for slot %d (needs root): %w", s.n, err)
		}
		return s, network, nil
	}
}

// startRegistry starts the cluster's image registry and pushes the
// images of the layout into it.
func (c *Cluster) startRegistry(ctx context.Context, step func(string, ...any)) error {
	reg, err := startRegistry(filepath.Join(c.opts.StateDir, "registry"), c.fileLogger("registry.log"))
	if err != nil {
		return err
	}
	c.registry = reg
	c.closers = append(c.closers, reg)
	layoutDir := c.opts.ImageLayout
	if layoutDir == "" {
		layoutDir = filepath.Join(c.opts.RepoDir, "bin", "images", "oci")
	}
	images, err := imagebuild.ReadLayout(layoutDir)
	if err != nil {
		if c.opts.BinaryImages != nil {
			step("image registry on %s, empty (%v)", reg.host, err)
			return nil
		}
		return fmt.Errorf("the images to run: %w (run make images)", err)
	}
	if err := reg.push(ctx, images); err != nil {
		return err
	}
	var names []string
	for _, t := range images {
		d, _ := t.Image.Digest()
		names = append(names, fmt.Sprintf("%s@%s", imagebuild.FullName(t.Ref), d.String()[:19]))
	}
	step("image registry on %s (mirror of docker.io) serving %s", reg.host, strings.Join(names, ", "))
	return nil
}

// RegistryHost is the host:port of the cluster's image registry; images
// pushed there as <host>/<repository>:<tag> can be run as
// docker.io/<repository>:<tag> (or with the host in their reference).
func (c *Cluster) RegistryHost() string { return c.registry.host }

func (c *Cluster) startAndWait(ctx context.Context, comp *component, env []string) error {
	if err := comp.start(env); err != nil {
		return err
	}
	c.components = append(c.components, comp)
	return waitHealthy(ctx, comp)
}

func waitHealthy(ctx context.Context, comp *component) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	return comp.waitHealthy(ctx)
}

func (c *Cluster) startProvisioner(ctx context.Context, creds credentials) error {
	client, err := kubernetes.NewForConfig(restConfig(creds))
	if err != nil {
		return err
	}
	root := filepath.Join(c.opts.StateDir, "volumes")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	log := c.fileLogger("provisioner.log")
	c.inProcess.Add(1)
	go func() {
		defer c.inProcess.Done()
		RunProvisioner(ctx, client, root, c.nodeName, log)
	}()
	return nil
}

// waitUsable waits until pods can be scheduled and admitted: the node is
// Ready without taints and the default service account exists.
func (c *Cluster) waitUsable(ctx context.Context, client kubernetes.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		node, err := client.CoreV1().Nodes().Get(ctx, c.nodeName, metav1.GetOptions{})
		ready := err == nil && len(node.Spec.Taints) == 0 && nodeReady(node)
		if ready {
			if _, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for node %s to be Ready and schedulable: %w", c.nodeName, ctx.Err())
		case <-tick.C:
		}
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Kubeconfig is the path of the admin kubeconfig (cluster-admin).
func (c *Cluster) Kubeconfig() string { return c.kubeconfig }

// RESTConfig returns a copy of the admin client configuration.
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.admin) }

// NodeName is the name of the cluster's node.
func (c *Cluster) NodeName() string { return c.nodeName }

// StateDir is the cluster's state directory.
func (c *Cluster) StateDir() string { return c.opts.StateDir }

// LogDir holds one log file per control-plane process, the node's
// (node.log) and the provisioner's; container logs are read with
// `kubectl logs`.
func (c *Cluster) LogDir() string { return filepath.Join(c.opts.StateDir, "logs") }

// Stop stops the node (and every pod process), the provisioner and the
// control plane, and releases the cluster's addresses. It is safe to call
// more than once. The state directory is left for inspection; the next
// Start on it wipes it.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		if c.cancelInProcess != nil {
			c.cancelInProcess()
			done := make(chan struct{})
			go func() { c.inProcess.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
			}
		}
		for i := len(c.components) - 1; i >= 0; i-- {
			c.components[i].stop()
		}
		for _, cl := range c.closers {
			_ = cl.Close()
		}
		if c.layout != nil {
			c.layout.release()
		}
		if c.network != nil {
			c.network.teardown()
		}
		if c.slot != nil {
			c.slot.release()
		}
		if c.stateLock != nil {
			_ = c.stateLock.Close()
		}
	})
}

// FindRepoDir walks up from the working directory to the repository root
// (the directory whose go.mod declares this module).
func FindRepoDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(strings.TrimSpace(string(data)), "module github.com/kairolog/kairolog\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("localcluster: not inside the kairolog repository; set Options.RepoDir")
		}
		dir = parent
	}
}

func tlsConfig(caPEM []byte, client keyPair) (*tls.Config, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cert, err := tls.X509KeyPair(client.certPEM, client.keyPEM)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// minimalEnv is the environment of the control-plane processes: enough to
// run, without the caller's KUBECONFIG or proxy settings leaking in.
func minimalEnv() []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	if tz, ok := os.LookupEnv("TZ"); ok {
		env = append(env, "TZ="+tz)
	}
	return env
}

// fileLogger appends structured lines to a file of the log directory (or
// discards them if the file cannot be opened); Stop closes it.
func (c *Cluster) fileLogger(name string) *slog.Logger {
	f, err := os.OpenFile(filepath.Join(c.layout.logDir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return slog.New(slog.DiscardHandler)
	}
	c.closers = append(c.closers, f)
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
