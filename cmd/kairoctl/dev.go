package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kairolog/kairolog/broker/peer"
)

func devCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "dev", Short: "Development helpers"}
	cmd.AddCommand(devClusterCmd())
	return cmd
}

type devCluster struct {
	brokers   int
	voters    int
	dataDir   string
	brokerBin string
	httpPort  int
	raftPort  int
	peerPort  int
	kafkaPort int
	gwPort    int
	samePorts bool
	config    string
	logLevel  string
}

func devClusterCmd() *cobra.Command {
	var d devCluster
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Run N brokers on this machine until Ctrl-C",
		Long: `Run N brokers on this machine until Ctrl-C.

On Linux broker i listens on 127.0.0.(i+1) with the same ports for every
broker (HTTP 8080, raft 9093, peer 9094, Kafka 9092, Kafka gateway 9095), as
pods would; elsewhere (or with --distinct-ports) every broker uses 127.0.0.1
and ports 8080+i (HTTP), 9093+i (raft), 9194+i (peer: --peer-port + 100 + i,
clear of the raft ports), 9292+i (Kafka: --kafka-port + 200 + i) and 9395+i
(gateway: --kafka-gateway-port + 300 + i). The first three brokers (--voters) form the metadata quorum; the others join
through them. Data goes to --data-dir/broker-i; the brokers share the
cluster secret in --data-dir/peer-secret (made on first use). A broker that
stops or is killed leaves the others running; its command line is printed
so that it can be started again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return d.run(cmd.Context(), cmd.OutOrStdout()) },
	}
	f := cmd.Flags()
	f.IntVar(&d.brokers, "brokers", 3, "number of brokers")
	f.IntVar(&d.voters, "voters", 3, "how many of them are metadata voters (1, 3 or 5)")
	f.StringVar(&d.dataDir, "data-dir", "./dev-cluster", "parent of the brokers' data directories")
	f.StringVar(&d.brokerBin, "broker-bin", "", "broker binary (default: 'broker' next to kairoctl, then $PATH)")
	f.IntVar(&d.httpPort, "http-port", 8080, "HTTP port (of broker 0 with --distinct-ports)")
	f.IntVar(&d.raftPort, "raft-port", 9093, "raft port (of broker 0 with --distinct-ports)")
	f.IntVar(&d.peerPort, "peer-port", 9094, "peer port between brokers (broker 0 uses this plus 100 with --distinct-ports)")
	f.IntVar(&d.kafkaPort, "kafka-port", 9092, "Kafka listener port (broker 0 uses this plus 200 with --distinct-ports)")
	f.IntVar(&d.gwPort, "kafka-gateway-port", 9095, "Kafka gateway port (broker 0 uses this plus 300 with --distinct-ports)")
	f.BoolVar(&d.samePorts, "distinct-ports", runtime.GOOS != "linux", "put every broker on 127.0.0.1 with its own ports")
	f.StringVar(&d.config, "config-file", "", "properties file passed to every broker")
	f.StringVar(&d.logLevel, "log-level", "info", "brokers' log level")
	return cmd
}

// devAddrs are the listen addresses of one broker of a dev cluster.
type devAddrs struct {
	host                     string
	httpPort, raftPort, peer int
	kafka, gateway           int
}

func (a devAddrs) http() string     { return net.JoinHostPort(a.host, strconv.Itoa(a.httpPort)) }
func (a devAddrs) raft() string     { return net.JoinHostPort(a.host, strconv.Itoa(a.raftPort)) }
func (a devAddrs) peerAddr() string { return net.JoinHostPort(a.host, strconv.Itoa(a.peer)) }
func (a devAddrs) kafkaAddr() string {
	return net.JoinHostPort(a.host, strconv.Itoa(a.kafka))
}
func (a devAddrs) gatewayAddr() string { return net.JoinHostPort(a.host, strconv.Itoa(a.gateway)) }

func (d *devCluster) host(i int) devAddrs {
	if d.samePorts {
		return devAddrs{"127.0.0.1", d.httpPort + i, d.raftPort + i, d.peerPort + 100 + i, d.kafkaPort + 200 + i, d.gwPort + 300 + i}
	}
	return devAddrs{"127.0.0." + strconv.Itoa(i+1), d.httpPort, d.raftPort, d.peerPort, d.kafkaPort, d.gwPort}
}

// secretFile is the cluster secret every broker of the dev cluster reads:
// made on first use, kept for restarts.
func (d *devCluster) secretFile() (string, error) {
	path := filepath.Join(d.dataDir, "peer-secret")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(d.dataDir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(peer.GenerateSecret().Reveal()+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write the cluster secret: %w", err)
	}
	return path, nil
}

func (d *devCluster) findBinary() (string, error) {
	if d.brokerBin != "" {
		return d.brokerBin, nil
	}
	if self, err := os.Executable(); err == nil {
		cand := filepath.Join(filepath.Dir(self), "broker")
		if st, err := os.Stat(cand); err == nil && !st.IsDir() {
			return cand, nil
		}
	}
	for _, name := range []string{"kairo-broker", "broker"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no broker binary: build one with 'go build -o bin/broker ./cmd/broker' and pass --broker-bin bin/broker")
}

func (d *devCluster) run(ctx context.Context, out io.Writer) error {
	if d.brokers < 1 || d.voters < 1 {
		return errors.New("--brokers and --voters must be at least 1")
	}
	bin, err := d.findBinary()
	if err != nil {
		return err
	}
	secret, err := d.secretFile()
	if err != nil {
		return err
	}
	voters := make([]string, 0, min(d.voters, d.brokers))
	for i := 0; i < min(d.voters, d.brokers); i++ {
		voters = append(voters, fmt.Sprintf("%d@%s", i, d.host(i).raft()))
	}
	var bootstrap []string
	for i := 0; i < len(voters); i++ {
		bootstrap = append(bootstrap, d.host(i).peerAddr())
	}
	var procs []*devProc
	var logs sync.WaitGroup
	exited := make(chan int, d.brokers)
	for i := 0; i < d.brokers; i++ {
		a := d.host(i)
		args := []string{"--id", strconv.Itoa(i),
			"--data-dir", filepath.Join(d.dataDir, "broker-"+strconv.Itoa(i)),
			"--listen", a.http(), "--raft-listen", a.raft(), "--peer-listen", a.peerAddr(),
			"--kafka-listen", a.kafkaAddr(), "--kafka-gateway-listen", a.gatewayAddr(),
			"--kafka-gateway-advertised-address", a.gatewayAddr(),
			"--advertised-address", a.http(), "--peer-secret-file", secret,
			"--initial-voters", strings.Join(voters, ","), "--bootstrap-servers", strings.Join(bootstrap, ","),
			"--log-level", d.logLevel}
		if d.config != "" {
			args = append(args, "--config-file", d.config)
		}
		c := exec.Command(bin, args...)
		stdout, _ := c.StdoutPipe()
		stderr, _ := c.StderrPipe()
		if err := c.Start(); err != nil {
			stopAll(procs)
			return fmt.Errorf("starting broker %d: %w", i, err)
		}
		p := &devProc{cmd: c, done: make(chan struct{})}
		procs = append(procs, p)
		prefix := fmt.Sprintf("[broker-%d] ", i)
		var pipes sync.WaitGroup
		for _, r := range []io.Reader{stdout, stderr} {
			pipes.Add(1)
			logs.Add(1)
			go func() { defer logs.Done(); defer pipes.Done(); prefixLines(out, prefix, r) }()
		}
		go func() {
			pipes.Wait() // Wait must not run before the pipes are drained.
			_ = c.Wait()
			close(p.done)
			exited <- i
		}()
		fmt.Fprintf(out, "broker %d: http://%s (raft %s, peer %s), Kafka %s (gateway %s), pid %d\n",
			i, a.http(), a.raft(), a.peerAddr(), a.kafkaAddr(), a.gatewayAddr(), c.Process.Pid)
	}
	fmt.Fprintf(out, "Use: kairoctl --broker http://%s cluster brokers   (Ctrl-C stops every broker)\n", d.host(0).http())
	// A broker that exits (killed to watch a failover, say) leaves the
	// others running: the cluster is meant to survive it. Its command line
	// is printed so it can be started again by hand.
	for running := len(procs); running > 0; {
		select {
		case <-ctx.Done():
			stopAll(procs)
			logs.Wait()
			return nil
		case i := <-exited:
			running--
			c := procs[i].cmd
			fmt.Fprintf(out, "broker %d exited (%v); the others keep running. Start it again with:\n  %s\n",
				i, c.ProcessState, strings.Join(c.Args, " "))
		}
	}
	fmt.Fprintln(out, "every broker has exited")
	logs.Wait()
	return nil
}

// devProc is one running broker; done closes when it has exited.
type devProc struct {
	cmd  *exec.Cmd
	done chan struct{}
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
}

// stopAll sends SIGTERM (a graceful shutdown) to every broker and kills
// what is left after 30 seconds.
func stopAll(procs []*devProc) {
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range procs {
		select {
		case <-p.done:
		case <-time.After(time.Until(deadline)):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
}
