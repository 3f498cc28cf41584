// Package nodeagent is the node of the local cluster: a kubelet stand-in,
// built on the virtual-kubelet library, that registers one Ready node and
// runs each pod bound to it as local processes.
//
// A pod gets its own network namespace, attached by a veth pair to the
// node's bridge, with an address from the pod range (reported as
// status.podIP). Images are pulled from a registry as a kubelet's runtime
// pulls them (imagePullPolicy, ErrImagePull and ImagePullBackOff, the
// digest as imageID; package imagestore), and each container runs its
// image's entrypoint in private mount, UTS and PID namespaces, pivoted into
// the image's root filesystem under a writable layer of its own, with its
// volumes, a generated /etc/hosts and resolver configuration mounted in it,
// as the user and with the capabilities its securityContext asks for
// (fsGroup applied to its volumes, a read-only root, no_new_privs). Mapping
// images to binaries of this machine (ImageMap) is a developer fallback.
// Probes, restart policy, the
// downward API, ConfigMap/Secret/projected service-account token volumes and
// PVCs behave as with a kubelet, and the kubelet API serves `kubectl logs`,
// `kubectl exec` and `kubectl port-forward` (which dials localhost inside the
// pod's network namespace). A userspace proxy gives Services their ClusterIP.
package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	vklog "github.com/virtual-kubelet/virtual-kubelet/log"
	vkslog "github.com/virtual-kubelet/virtual-kubelet/log/slog"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/kairolog/kairolog/internal/imagestore"
)

// Config describes the node.
type Config struct {
	// NodeName is the Node's name and host name label.
	NodeName string
	// NodeIP is the node's InternalIP; the kubelet API listens on it. It is
	// the address of Bridge, inside PodCIDR, and the pods' default gateway.
	NodeIP net.IP
	// PodCIDR is where pod addresses come from (NodeIP is skipped).
	PodCIDR *net.IPNet
	// Bridge is the existing bridge each pod's veth pair is attached to.
	Bridge string
	// ServiceCIDR is the Service range (kube-apiserver's
	// --service-cluster-ip-range). The service proxy serves it from a
	// network namespace of its own at ServiceProxyIP(PodCIDR); whoever runs
	// the node routes the range there for the machine itself.
	ServiceCIDR *net.IPNet
	// KubeletPort is the kubelet API port; 0 picks a free one.
	KubeletPort int
	// RESTConfig authenticates as the node (system:node:<NodeName>).
	RESTConfig *rest.Config
	// ServingCertPEM and ServingKeyPEM are the kubelet API's certificate.
	ServingCertPEM, ServingKeyPEM []byte
	// ClientCAPEM verifies callers of the kubelet API.
	ClientCAPEM []byte
	// KubeletClients are the certificate common names allowed to call the
	// kubelet API (kube-apiserver's kubelet client).
	KubeletClients []string
	// APIServer is the host:port of kube-apiserver, where the
	// default/kubernetes Service forwards.
	APIServer string
	// ImageMirrors maps a registry host of image references ("docker.io")
	// to the registry that serves it ("127.0.0.1:41234"), as containerd's
	// registry mirrors. Images are pulled, cached by digest and unpacked
	// under StateDir/images.
	ImageMirrors map[string]string
	// Images maps image repositories to binaries of this machine instead of
	// pulling them: the developer fallback (kairo-local --binary-images).
	// Nil pulls every image.
	Images ImageMap
	// StateDir holds the pods' sandboxes, logs and volumes.
	StateDir string
	// ClusterDomain is the DNS suffix of in-cluster names (cluster.local).
	ClusterDomain string
	// Log receives the node's own log.
	Log *slog.Logger
	// RestartBackoff is the first non-zero crash-loop back-off (10s, as the
	// kubelet's, when zero).
	RestartBackoff time.Duration
	// VolumeResync is how often ConfigMap, Secret, downward-API and token
	// volumes are refreshed (30s when zero).
	VolumeResync time.Duration
}

// Agent is a running node.
type Agent struct {
	cfg      Config
	client   kubernetes.Interface
	provider *provider
	ready    chan struct{}

	podLister     func() []*corev1.Pod
	serviceLister func() []*corev1.Service
	namesChanged  chan struct{}
}

// New checks cfg and prepares the node; Run starts it.
func New(cfg Config) (*Agent, error) {
	if cfg.NodeName == "" || cfg.NodeIP == nil || cfg.PodCIDR == nil || cfg.ServiceCIDR == nil || cfg.Bridge == "" || cfg.RESTConfig == nil || cfg.StateDir == "" {
		return nil, errors.New("nodeagent: NodeName, NodeIP, PodCIDR, ServiceCIDR, Bridge, RESTConfig and StateDir are required")
	}
	if cfg.ClusterDomain == "" {
		cfg.ClusterDomain = "cluster.local"
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.VolumeResync == 0 {
		cfg.VolumeResync = 30 * time.Second
	}
	if cfg.KubeletPort == 0 {
		l, err := net.Listen("tcp", net.JoinHostPort(cfg.NodeIP.String(), "0"))
		if err != nil {
			return nil, err
		}
		cfg.KubeletPort = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
	}
	client, err := kubernetes.NewForConfig(cfg.RESTConfig)
	if err != nil {
		return nil, err
	}
	return &Agent{cfg: cfg, client: client, ready: make(chan struct{}), namesChanged: make(chan struct{}, 1)}, nil
}

// KubeletPort is the port of the kubelet API.
func (a *Agent) KubeletPort() int { return a.cfg.KubeletPort }

// Ready is closed once the node is registered and accepts pods.
func (a *Agent) Ready() <-chan struct{} { return a.ready }

// Run runs the node until ctx ends, then stops every pod and returns.
func (a *Agent) Run(ctx context.Context) error {
	log := a.cfg.Log
	ctx = vklog.WithLogger(ctx, vkslog.FromSlog(log))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	exe, err := os.Executable()
	if err != nil {
		return err
	}
	podsDir := filepath.Join(a.cfg.StateDir, "pods")
	if err := os.MkdirAll(podsDir, 0o755); err != nil {
		return err
	}
	store, err := imagestore.Open(imagestore.Config{Dir: filepath.Join(a.cfg.StateDir, "images"), Mirrors: a.cfg.ImageMirrors})
	if err != nil {
		return err
	}

	podFactory := informers.NewSharedInformerFactoryWithOptions(a.client, time.Minute, nodeutil.PodInformerFilter(a.cfg.NodeName))
	clusterFactory := informers.NewSharedInformerFactory(a.client, time.Minute)
	podInformer := podFactory.Core().V1().Pods()
	serviceInformer := clusterFactory.Core().V1().Services()
	a.podLister = func() []*corev1.Pod {
		pods, _ := podInformer.Lister().List(labels.Everything())
		return pods
	}
	a.serviceLister = func() []*corev1.Service {
		svcs, _ := serviceInformer.Lister().List(labels.Everything())
		return svcs
	}
	for _, inf := range []cache.SharedIndexInformer{podInformer.Informer(), serviceInformer.Informer()} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { a.signalNames() },
			UpdateFunc: func(any, any) { a.signalNames() },
			DeleteFunc: func(any) { a.signalNames() },
		}); err != nil {
			return err
		}
	}

	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: a.client.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: a.cfg.NodeName})

	network, err := newPodNetwork(a.cfg.Bridge, a.cfg.NodeIP, a.cfg.PodCIDR, a.cfg.ServiceCIDR)
	if err != nil {
		return err
	}
	proxyNS, err := network.attachServiceProxy()
	if err != nil {
		return err
	}
	defer proxyNS.close()
	deps := &runtimeDeps{
		store:    store,
		network:  network,
		images:   a.cfg.Images,
		src:      apiSource{client: a.client, services: serviceInformer.Lister()},
		recorder: recorder,
		hostsFor: a.hostsFor,
		nodeIP:   a.cfg.NodeIP.String(),
		// Nothing listens on port 53 there, and an answer from the pod's
		// own lo is not rate-limited as ICMP errors from the node are:
		// a name outside the hosts file fails at once, "connection refused".
		nameserver:  "127.0.0.1",
		domain:      a.cfg.ClusterDomain,
		log:         log,
		backoffBase: a.cfg.RestartBackoff,
		exe:         exe,
		clock:       time.Now,
		resync:      a.cfg.VolumeResync,
	}
	_, cidrBits := a.cfg.PodCIDR.Mask.Size()
	if cidrBits != 32 {
		return fmt.Errorf("nodeagent: pod CIDR %s is not IPv4", a.cfg.PodCIDR)
	}
	a.provider = newProvider(deps, newIPPool(a.cfg.PodCIDR, a.cfg.NodeIP, network.proxy), podsDir, a.client, a.signalNames)

	nodeController, err := node.NewNodeController(node.NaiveNodeProvider{},
		nodeObject(a.cfg.NodeName, a.cfg.NodeIP, a.cfg.PodCIDR, a.cfg.KubeletPort), a.client.CoreV1().Nodes(),
		node.WithNodeEnableLeaseV1(a.client.CoordinationV1().Leases(corev1.NamespaceNodeLease), node.DefaultLeaseDuration),
		node.WithNodeStatusUpdateInterval(20*time.Second))
	if err != nil {
		return err
	}
	podController, err := node.NewPodController(node.PodControllerConfig{
		PodClient:         a.client.CoreV1(),
		PodInformer:       podInformer,
		EventRecorder:     recorder,
		Provider:          a.provider,
		ConfigMapInformer: clusterFactory.Core().V1().ConfigMaps(), // never started: env and volumes are read per object
		SecretInformer:    clusterFactory.Core().V1().Secrets(),
		ServiceInformer:   serviceInformer,
		// The node resolves env itself: status.podIP is only known here.
		SkipDownwardAPIResolution: true,
	})
	if err != nil {
		return err
	}

	server, err := a.kubeletServer()
	if err != nil {
		return err
	}
	listener, err := net.Listen("tcp", net.JoinHostPort(a.cfg.NodeIP.String(), strconv.Itoa(a.cfg.KubeletPort)))
	if err != nil {
		return fmt.Errorf("kubelet API: %w", err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := server.ServeTLS(listener, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("Kubelet API stopped", "err", err)
		}
	}()

	podInformer.Informer() // registered before Start
	podFactory.Start(ctx.Done())
	// Only Services: ConfigMaps and Secrets are fetched one by one, as the
	// Node authorizer allows.
	go serviceInformer.Informer().Run(ctx.Done())

	proxy := newServiceProxy(log, a.cfg.APIServer, proxyNS)
	proxyChanged := make(chan struct{}, 1)
	wg.Add(2)
	go func() {
		defer wg.Done()
		proxy.run(ctx, proxyChanged, func() ([]*corev1.Service, []*corev1.Pod) { return a.serviceLister(), a.podLister() })
	}()
	go func() {
		defer wg.Done()
		a.syncNames(ctx, proxyChanged)
	}()

	errc := make(chan error, 2)
	go func() { errc <- nodeController.Run(ctx) }()
	select {
	case <-nodeController.Ready():
	case err := <-errc:
		return fmt.Errorf("register node: %w", err)
	case <-ctx.Done():
		return ctx.Err()
	}
	go func() { errc <- podController.Run(ctx, 4) }()
	select {
	case <-podController.Ready():
		close(a.ready)
		log.Info("Node ready", "node", a.cfg.NodeName, "kubelet", listener.Addr().String())
	case err := <-errc:
		return fmt.Errorf("pod controller: %w", err)
	case <-ctx.Done():
	}

	<-ctx.Done()
	log.Info("Node stopping")
	a.provider.shutdown(5 * time.Second)
	shutdownCtx, stop := context.WithTimeout(context.Background(), 2*time.Second)
	_ = server.Shutdown(shutdownCtx)
	stop()
	_ = server.Close()
	wg.Wait()
	return nil
}

// signalNames notes that pods or Services changed.
func (a *Agent) signalNames() {
	select {
	case a.namesChanged <- struct{}{}:
	default:
	}
}

// syncNames rewrites pods' hosts files and resyncs the service proxy after
// changes, coalescing bursts of events.
func (a *Agent) syncNames(ctx context.Context, proxyChanged chan<- struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.namesChanged:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
		for _, pr := range a.provider.all() {
			pr.refreshHosts()
		}
		select {
		case proxyChanged <- struct{}{}:
		default:
		}
	}
}

// hostsFor renders pod's hosts file from the pods and Services known now.
func (a *Agent) hostsFor(pod *corev1.Pod, ip string) []byte {
	return renderHosts(pod, ip, a.podLister(), a.serviceLister(), a.cfg.ClusterDomain)
}
