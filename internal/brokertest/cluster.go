package brokertest

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/internal/heldport"
)

// Options configure a Cluster.
type Options struct {
	// Brokers is how many broker slots the cluster starts with (StartAll
	// starts them). A Node adds slots as a StatefulSet scales up. Default 1.
	Brokers int
	// Voters is how many of the first brokers form the metadata quorum at
	// bootstrap. Default min(3, Brokers).
	Voters int
	// Config are broker properties given to every broker, after any
	// properties a pod's ConfigMap supplies (so these win). Both come
	// after testProperties.
	Config map[string]string
	// Dir holds the data directories and logs. Default: a temporary
	// directory that Close removes.
	Dir string
	// Binary is the broker binary. Default: Build().
	Binary string
	// LogLevel of the brokers. Default "info".
	LogLevel string
	// Output, when set, receives every broker log line prefixed with
	// "[broker-i] ", besides the broker's log file.
	Output io.Writer
	// Debug gives every broker a --debug-listen address of its own
	// (DebugAddress), held like its other ports.
	Debug bool
	// Args, when set, gives broker i command-line flags beyond the
	// cluster's own (--debug-listen, say).
	Args func(i int) []string
	// Env is added to every broker's environment (GOMEMLIMIT, say).
	Env []string
	// HTTPTLS, when set, is the client TLS of brokers whose HTTP API Args
	// puts on TLS (--http-tls): readiness probes and Endpoint use https.
	HTTPTLS *tls.Config
}

// Cluster is a set of broker processes on loopback addresses.
type Cluster struct {
	opts Options
	bin  string
	// handsOver: the broker binary serves on the sockets passed to it
	// (heldport.ListenFDsEnv); an older one must bind its ports itself.
	handsOver bool
	dir       string
	tempDir   bool
	ipBase    int

	mu      sync.Mutex
	brokers []*proc
	voters  string
	seeds   string

	proxyOnce sync.Once
	proxy     *serviceProxy

	httpc *http.Client
	// httpsc probes brokers that serve HTTP over TLS, without verifying
	// their certificates, as a kubelet's HTTPS probe does.
	httpsc *http.Client
	stop   context.CancelFunc
	probed sync.WaitGroup
}

// proc is one broker slot: stable addresses and data directory, and the
// process currently running on them, if any.
type proc struct {
	id       int
	host     string
	httpPort int
	raftPort int
	peerPort int
	// kafkaPort and gatewayPort are the Kafka listener's and the Kafka
	// gateway's.
	kafkaPort   int
	gatewayPort int
	debugPort   int // 0 without Options.Debug
	dataDir     string
	logPath     string

	mu sync.Mutex
	// held are the sockets holding the broker's ports while no process
	// serves them; the next process is handed them and serves on them.
	held []*heldport.Bound
	// https: the running process serves its HTTP API over TLS.
	https bool
	cmd   *exec.Cmd
	done  chan struct{}
	ready bool
	fails int // consecutive failed probes of the running process
}

// readyFailureThreshold is how many probes in a row (200 ms apart) must fail
// before a running broker counts as not ready, as a kubelet's readiness
// probe does; one slow answer on a loaded machine is not an outage. A broker
// whose process exits is not ready at once.
const readyFailureThreshold = 3

// NewCluster allocates addresses and directories for opts.Brokers brokers
// without starting any.
func NewCluster(opts Options) (*Cluster, error) {
	if opts.Brokers <= 0 {
		opts.Brokers = 1
	}
	if opts.Voters <= 0 {
		opts.Voters = min(3, opts.Brokers)
	}
	if opts.Voters > opts.Brokers {
		return nil, fmt.Errorf("brokertest: %d voters but %d brokers", opts.Voters, opts.Brokers)
	}
	if opts.LogLevel == "" {
		opts.LogLevel = "info"
	}
	c := &Cluster{opts: opts, bin: opts.Binary, dir: opts.Dir, ipBase: 2 + rand.IntN(200),
		httpc: &http.Client{Transport: client.NewTransport(), Timeout: 2 * time.Second}}
	if opts.HTTPTLS != nil {
		tr := client.NewTransport()
		tr.TLSClientConfig = opts.HTTPTLS
		c.httpc.Transport = tr
	}
	insecure := client.NewTransport()
	insecure.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // a readiness probe, as a kubelet's
	c.httpsc = &http.Client{Transport: insecure, Timeout: 2 * time.Second}
	if c.bin == "" {
		var err error
		if c.bin, err = Build(); err != nil {
			return nil, err
		}
	}
	c.handsOver = takesSockets(c.bin)
	if c.dir == "" {
		d, err := os.MkdirTemp("", "kairolog-brokers-")
		if err != nil {
			return nil, err
		}
		c.dir, c.tempDir = d, true
	}
	if err := os.WriteFile(c.SecretFile(), []byte(peer.GenerateSecret().Reveal()+"\n"), 0o600); err != nil {
		c.Close()
		return nil, err
	}
	for i := 0; i < opts.Brokers; i++ {
		if _, err := c.add(); err != nil {
			c.Close()
			return nil, err
		}
	}
	var voters, seeds []string
	for _, p := range c.brokers[:opts.Voters] {
		voters = append(voters, fmt.Sprintf("%d@%s", p.id, p.raftAddress()))
		seeds = append(seeds, p.peerAddress())
	}
	c.voters, c.seeds = strings.Join(voters, ","), strings.Join(seeds, ",")
	ctx, cancel := context.WithCancel(context.Background())
	c.stop = cancel
	c.probed.Add(1)
	go c.probe(ctx)
	return c, nil
}

func (c *Cluster) add() (*proc, error) {
	id := len(c.brokers)
	host := "127.0.0." + strconv.Itoa(2+(c.ipBase-2+id)%252)
	// The ports are held from now until the broker's process takes them
	// (see proc.held), not only picked: nothing else can take one meanwhile.
	held := make([]*heldport.Bound, 5, 6)
	if c.opts.Debug {
		held = held[:6]
	}
	for i := range held {
		b, err := heldport.Bind(host)
		if err != nil {
			closeAll(held)
			return nil, fmt.Errorf("brokertest: no free port on %s: %w", host, err)
		}
		held[i] = b
	}
	p := &proc{id: id, host: host, httpPort: held[0].Port(), raftPort: held[1].Port(), peerPort: held[2].Port(),
		kafkaPort: held[3].Port(), gatewayPort: held[4].Port(), held: held,
		dataDir: filepath.Join(c.dir, "broker-"+strconv.Itoa(id)),
		logPath: filepath.Join(c.dir, "broker-"+strconv.Itoa(id)+".log")}
	if c.opts.Debug {
		p.debugPort = held[5].Port()
	}
	if err := os.MkdirAll(p.dataDir, 0o755); err != nil {
		closeAll(held)
		return nil, err
	}
	c.brokers = append(c.brokers, p)
	return p, nil
}

// addresses are the broker's listen addresses, in the order of proc.held.
func (p *proc) addresses() []string {
	addrs := []string{p.address(), p.raftAddress(), p.peerAddress(), p.kafkaAddress(), p.gatewayAddress()}
	if p.debugPort != 0 {
		addrs = append(addrs, p.debugAddress())
	}
	return addrs
}

// holdAgain holds the addresses of a broker whose process exited until it
// starts again. An address that cannot be held (another socket took it
// meanwhile) is left for the broker to bind, which then fails as a pod
// restarted onto a taken port would.
func holdAgain(addrs []string) []*heldport.Bound {
	var held []*heldport.Bound
	for _, a := range addrs {
		if b, err := heldport.Rebind(a); err == nil {
			held = append(held, b)
		}
	}
	return held
}

func closeAll(held []*heldport.Bound) {
	for _, b := range held {
		if b != nil {
			b.Close()
		}
	}
}

func (p *proc) address() string     { return net.JoinHostPort(p.host, strconv.Itoa(p.httpPort)) }
func (p *proc) raftAddress() string { return net.JoinHostPort(p.host, strconv.Itoa(p.raftPort)) }
func (p *proc) peerAddress() string { return net.JoinHostPort(p.host, strconv.Itoa(p.peerPort)) }
func (p *proc) kafkaAddress() string {
	return net.JoinHostPort(p.host, strconv.Itoa(p.kafkaPort))
}
func (p *proc) gatewayAddress() string { return net.JoinHostPort(p.host, strconv.Itoa(p.gatewayPort)) }
func (p *proc) debugAddress() string   { return net.JoinHostPort(p.host, strconv.Itoa(p.debugPort)) }

// SecretFile holds the cluster secret every broker is started with
// (--peer-secret-file); SetSecret replaces it.
func (c *Cluster) SecretFile() string { return filepath.Join(c.dir, "peer-secret") }

// SetSecret makes secret the cluster secret of brokers started from now on
// (a pod's mounted Secret, say). The file is replaced in one rename, so a
// broker starting meanwhile reads the old secret or the new one, whole.
func (c *Cluster) SetSecret(secret []byte) error {
	tmp, err := os.CreateTemp(c.dir, "peer-secret-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(secret)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), c.SecretFile())
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("brokertest: set the cluster secret: %w", err)
	}
	return nil
}

// PeerAddress is broker i's peer listener, "127.0.0.x:port".
func (c *Cluster) PeerAddress(i int) string { return c.broker(i).peerAddress() }

// DebugAddress is broker i's --debug-listen address (Go's pprof
// profiles), "127.0.0.x:port"; empty without Options.Debug.
func (c *Cluster) DebugAddress(i int) string {
	if p := c.broker(i); p.debugPort != 0 {
		return p.debugAddress()
	}
	return ""
}

// RaftAddress is broker i's metadata quorum listener, "127.0.0.x:port".
func (c *Cluster) RaftAddress(i int) string { return c.broker(i).raftAddress() }

// Len is the number of broker slots (running or not).
func (c *Cluster) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.brokers)
}

// Grow adds broker slots until there are at least n and returns the count.
// New brokers are not voters: they join the quorum through the voters.
func (c *Cluster) Grow(n int) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.brokers) < n {
		if _, err := c.add(); err != nil {
			return len(c.brokers), err
		}
	}
	return len(c.brokers), nil
}

func (c *Cluster) broker(i int) *proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i < 0 || i >= len(c.brokers) {
		panic(fmt.Sprintf("brokertest: no broker %d (the cluster has %d)", i, len(c.brokers)))
	}
	return c.brokers[i]
}

// KafkaAddress is broker i's Kafka listener, "127.0.0.x:port", as the
// broker advertises it.
func (c *Cluster) KafkaAddress(i int) string { return c.broker(i).kafkaAddress() }

// KafkaAddresses are every broker's Kafka listener, by id: seed brokers for
// a Kafka client.
func (c *Cluster) KafkaAddresses() []string {
	out := make([]string, c.Len())
	for i := range out {
		out[i] = c.KafkaAddress(i)
	}
	return out
}

// GatewayAddress is broker i's Kafka gateway listener, "127.0.0.x:port",
// advertised as itself (not localhost), so a client reaches it directly.
func (c *Cluster) GatewayAddress(i int) string { return c.broker(i).gatewayAddress() }

// Endpoint is broker i's HTTP base URL, "http://127.0.0.x:port".
func (c *Cluster) Endpoint(i int) string { return c.scheme() + c.broker(i).address() }

func (c *Cluster) scheme() string {
	if c.opts.HTTPTLS != nil {
		return "https://"
	}
	return "http://"
}

// Endpoints are every broker's HTTP base URL, by id.
func (c *Cluster) Endpoints() []string {
	out := make([]string, c.Len())
	for i := range out {
		out[i] = c.Endpoint(i)
	}
	return out
}

// DataDir is broker i's data directory.
func (c *Cluster) DataDir(i int) string { return c.broker(i).dataDir }

// LogFile is the file broker i's output is appended to, across restarts.
func (c *Cluster) LogFile(i int) string { return c.broker(i).logPath }

// PropertiesFile is the properties file broker i was last started with
// (--config-file).
func (c *Cluster) PropertiesFile(i int) string {
	return filepath.Join(c.dir, "broker-"+strconv.Itoa(i)+".properties")
}

// Client is a broker API client for broker i.
func (c *Cluster) Client(i int) *client.Client {
	cl, err := client.New(c.Endpoint(i), client.WithTimeout(10*time.Second))
	if err != nil {
		panic(err)
	}
	return cl
}

// Start starts broker i with the cluster's properties; a running broker is
// left alone.
func (c *Cluster) Start(i int) error { return c.StartWithProperties(i, nil) }

// StartWithProperties starts broker i with props (a Java properties file,
// for example a ConfigMap's broker.properties) followed by the cluster's
// Options.Config; a running broker is left alone.
func (c *Cluster) StartWithProperties(i int, props []byte) error {
	return c.StartWithArgs(i, props, nil)
}

// StartWithArgs starts broker i as StartWithProperties does, with extra
// flags after the cluster's own (a pod's, say); a running broker is left
// alone. With --http-tls among them the broker is probed over HTTPS.
func (c *Cluster) StartWithArgs(i int, props []byte, extra []string) error {
	p := c.broker(i)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running() {
		return nil
	}
	cfgPath := c.PropertiesFile(i)
	if err := os.WriteFile(cfgPath, c.properties(props), 0o644); err != nil {
		return err
	}
	args := []string{
		"--id", strconv.Itoa(i),
		"--data-dir", p.dataDir,
		"--listen", p.address(),
		"--raft-listen", p.raftAddress(),
		"--peer-listen", p.peerAddress(),
		"--kafka-listen", p.kafkaAddress(),
		"--kafka-gateway-listen", p.gatewayAddress(),
		"--kafka-gateway-advertised-address", p.gatewayAddress(),
		"--peer-secret-file", c.SecretFile(),
		"--advertised-address", p.address(),
		"--initial-voters", c.voters,
		"--bootstrap-servers", c.seeds,
		"--config-file", cfgPath,
		"--log-level", c.opts.LogLevel,
	}
	if p.debugPort != 0 {
		args = append(args, "--debug-listen", p.debugAddress())
	}
	if c.opts.Args != nil {
		args = append(args, c.opts.Args(i)...)
	}
	args = append(args, extra...)
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.bin, args...)
	if len(c.opts.Env) > 0 {
		cmd.Env = append(os.Environ(), c.opts.Env...)
	}
	// The broker must not outlive a test binary that dies without Close.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if c.handsOver {
		if err := heldport.Pass(cmd, p.held...); err != nil {
			logf.Close()
			return err
		}
	} else {
		// A broker built before it took sockets over binds its ports
		// itself: they can only be released for it.
		closeAll(p.held)
		p.held = nil
	}
	var out io.Writer = logf
	var pw *io.PipeWriter
	if c.opts.Output != nil {
		var pr *io.PipeReader
		pr, pw = io.Pipe()
		out = io.MultiWriter(logf, pw)
		go prefixLines(c.opts.Output, fmt.Sprintf("[broker-%d] ", i), pr)
	}
	cmd.Stdout, cmd.Stderr = out, out
	fmt.Fprintf(logf, "=== brokertest: starting broker %d: %s %s\n", i, c.bin, strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("brokertest: start broker %d: %w", i, err)
	}
	// The process holds the ports now.
	closeAll(p.held)
	p.held = nil
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		held := holdAgain(p.addresses())
		p.mu.Lock()
		p.held = held
		p.mu.Unlock()
		logf.Close()
		if pw != nil {
			pw.Close()
		}
		close(done)
	}()
	p.cmd, p.done, p.ready, p.fails = cmd, done, false, 0
	p.https = slices.Contains(extra, "--http-tls")
	return nil
}

// testProperties start every broker's properties, so that a ConfigMap or
// Options.Config can override them: as in Kafka's own test clusters, a
// group's first generation does not wait group.initial.rebalance.delay.ms
// (3 s) for more consumers; a test of that wait sets it.
const testProperties = "group.initial.rebalance.delay.ms=0\n"

func (c *Cluster) properties(props []byte) []byte {
	var b strings.Builder
	b.WriteString(testProperties)
	b.Write(props)
	if len(props) > 0 && props[len(props)-1] != '\n' {
		b.WriteByte('\n')
	}
	keys := make([]string, 0, len(c.opts.Config))
	for k := range c.opts.Config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, c.opts.Config[k])
	}
	return []byte(b.String())
}

var outMu sync.Mutex

func prefixLines(w io.Writer, prefix string, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		outMu.Lock()
		fmt.Fprintln(w, prefix+sc.Text())
		outMu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r)
}

// running reports a live process; p.mu is held.
func (p *proc) running() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// StartAll starts every broker slot.
func (c *Cluster) StartAll() error {
	for i := 0; i < c.Len(); i++ {
		if err := c.Start(i); err != nil {
			return err
		}
	}
	return nil
}

// Running reports whether broker i's process is alive.
func (c *Cluster) Running(i int) bool {
	p := c.broker(i)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running()
}

// PID is the process id of broker i, or 0 when it is not running (tests
// read its memory from /proc).
func (c *Cluster) PID(i int) int {
	p := c.broker(i)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running() {
		return 0
	}
	return p.cmd.Process.Pid
}

// Stop stops broker i gracefully (SIGTERM) and waits for it to exit,
// killing it after 45 s. A stopped broker stays stopped.
func (c *Cluster) Stop(i int) error { return c.signal(i, syscall.SIGTERM, 45*time.Second) }

// Kill kills broker i (SIGKILL), as a crash or a lost node would.
func (c *Cluster) Kill(i int) error { return c.signal(i, syscall.SIGKILL, 10*time.Second) }

// Restart stops broker i gracefully and starts it again on its data.
func (c *Cluster) Restart(i int) error {
	if err := c.Stop(i); err != nil {
		return err
	}
	return c.Start(i)
}

func (c *Cluster) signal(i int, sig syscall.Signal, grace time.Duration) error {
	p := c.broker(i)
	p.mu.Lock()
	if !p.running() {
		p.mu.Unlock()
		return nil
	}
	p.ready = false
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("brokertest: broker %d did not stop within %v; killed (log: %s)", i, grace, p.logPath)
	}
	return nil
}

// Ready reports broker i's /ready as probed every 200 ms: true after one
// success, false once the process exits or after three failures in a row.
func (c *Cluster) Ready(i int) bool {
	p := c.broker(i)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ready && p.running()
}

// WaitReady waits until the given brokers (every slot when none is given)
// answer /ready.
func (c *Cluster) WaitReady(ctx context.Context, ids ...int) error {
	if len(ids) == 0 {
		for i := 0; i < c.Len(); i++ {
			ids = append(ids, i)
		}
	}
	for {
		var notReady []int
		for _, i := range ids {
			if !c.probeOne(ctx, c.broker(i)) {
				notReady = append(notReady, i)
			}
		}
		if len(notReady) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("brokertest: brokers %v not ready: %w", notReady, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// probe keeps every running broker's ready flag current.
func (c *Cluster) probe(ctx context.Context) {
	defer c.probed.Done()
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		c.mu.Lock()
		procs := append([]*proc(nil), c.brokers...)
		c.mu.Unlock()
		var wg sync.WaitGroup
		for _, p := range procs {
			wg.Add(1)
			go func() { defer wg.Done(); c.probeOne(ctx, p) }()
		}
		wg.Wait()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (c *Cluster) probeOne(ctx context.Context, p *proc) bool {
	p.mu.Lock()
	running := p.running()
	cmd, scheme, httpc := p.cmd, c.scheme(), c.httpc
	if p.https && c.opts.HTTPTLS == nil {
		scheme, httpc = "https://", c.httpsc
	}
	p.mu.Unlock()
	ready := false
	if running {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, scheme+p.address()+"/ready", nil)
		if resp, err := httpc.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ready = resp.StatusCode == http.StatusOK
		}
		cancel()
	}
	p.mu.Lock()
	if p.cmd == cmd { // not restarted meanwhile
		switch {
		case !p.running():
			p.ready, p.fails = false, 0
		case ready:
			p.ready, p.fails = true, 0
		default:
			p.fails++
			if p.fails >= readyFailureThreshold {
				p.ready = false
			}
		}
	}
	p.mu.Unlock()
	return ready
}

// Close stops the service endpoint and every broker (SIGTERM, then SIGKILL
// after 15 s), and removes the directory NewCluster created.
func (c *Cluster) Close() error {
	if c.stop != nil {
		c.stop()
		c.probed.Wait()
	}
	if c.proxy != nil {
		c.proxy.close()
	}
	var wg sync.WaitGroup
	errs := make([]error, c.Len())
	for i := 0; i < c.Len(); i++ {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.signal(i, syscall.SIGTERM, 15*time.Second) }()
	}
	wg.Wait()
	c.mu.Lock()
	procs := append([]*proc(nil), c.brokers...)
	c.mu.Unlock()
	for _, p := range procs {
		p.mu.Lock()
		closeAll(p.held)
		p.held = nil
		p.mu.Unlock()
	}
	if c.tempDir {
		errs = append(errs, os.RemoveAll(c.dir))
	}
	return errors.Join(errs...)
}
