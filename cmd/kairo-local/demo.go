package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/kairolog/kairolog/internal/localcluster"
	"github.com/kairolog/kairolog/internal/nodeagent"
)

// The demo is `make demo`: a local cluster, the operator installed from the
// Helm chart with the real helm CLI, the samples applied with kubectl, one
// produce/fetch round through `kubectl port-forward svc/kairo 8080` as the
// README shows it, then the cluster stays up for the user until Ctrl-C.

const demoUsage = `Usage: kairo-local demo [flags]

Starts a local cluster, installs the KairoLog operator with Helm, applies
config/samples/, waits for them to be Ready, produces and fetches one record
through kubectl port-forward, prints what to try, and runs until interrupted.

Flags:
`

// Release and namespace of the operator, as the chart's README installs it.
const (
	demoRelease   = "kairolog-operator"
	demoNamespace = "kairolog-system"
	// demoImageTag is the tag the demo installs with, the one `make
	// images` gives the images (BROKER_IMG, OPERATOR_IMG).
	demoImageTag = "dev"
)

type demoOptions struct {
	stateDir   string
	repoDir    string
	helm       string
	localPort  int
	exit       bool
	readyAfter time.Duration
	layout     string
	binary     bool
	images     imageFlag
	fs         *flag.FlagSet
}

func demoFlags(out io.Writer) *demoOptions {
	o := &demoOptions{images: imageFlag{m: nodeagent.ImageMap{}}}
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.stateDir, "state-dir", ".kairo/demo", "directory for the demo's cluster, logs and kubeconfig (emptied on start)")
	fs.StringVar(&o.repoDir, "repo", "", "repository root (default: found from the working directory)")
	fs.StringVar(&o.helm, "helm", "", "helm binary (default: <repo>/bin/helm)")
	fs.IntVar(&o.localPort, "local-port", 8080, "local port of the demo's own port-forward (a free one if this one is taken)")
	fs.BoolVar(&o.exit, "exit-after-round", os.Getenv("KAIRO_DEMO_EXIT") != "", "stop everything and exit after the produce/fetch round instead of waiting for Ctrl-C (env KAIRO_DEMO_EXIT)")
	fs.DurationVar(&o.readyAfter, "ready-timeout", 5*time.Minute, "how long to wait for the samples to be Ready")
	fs.StringVar(&o.layout, "images", "", "OCI image layout the cluster's registry serves (default: <repo>/bin/images/oci, written by make images)")
	fs.BoolVar(&o.binary, "binary-images", false, "developer fallback: run bin/broker and bin/manager for the kairolog images instead of pulling them")
	fs.Var(&o.images, "image-map", "with --binary-images, map an image repository to a binary, repo=path (repeatable; implies --binary-images)")
	o.fs = fs
	return o
}

// demoRun is one run of the demo: its cluster, the started helper
// processes and the clock every stage is timed against.
type demoRun struct {
	o       *demoOptions
	began   time.Time
	out     io.Writer
	cluster *localcluster.Cluster
	env     []string // for helm and kubectl: KUBECONFIG, helm's own dirs
	logDir  string
	// forwardPort is the local port of the round's port-forward, and
	// heldPort what held --local-port when it was taken ("" if free).
	forwardPort int
	heldPort    string
}

func demo(args []string) error {
	o := demoFlags(os.Stderr)
	o.fs.Usage = func() {
		fmt.Fprint(os.Stderr, demoUsage)
		o.fs.PrintDefaults()
	}
	if err := o.fs.Parse(args); err != nil {
		return err
	}
	var err error
	if o.repoDir == "" {
		if o.repoDir, err = localcluster.FindRepoDir(); err != nil {
			return err
		}
	}
	if o.helm == "" {
		o.helm = filepath.Join(o.repoDir, "bin", "helm")
	}
	if _, err := os.Stat(o.helm); err != nil {
		return fmt.Errorf("helm: %w (run make helm)", err)
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		return errors.New("kubectl is not on PATH; the demo drives the cluster with it as a user would")
	}
	if os.Geteuid() != 0 {
		return errors.New("the local cluster needs root: pods get network namespaces and the node a bridge (run make demo as root)")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d := &demoRun{o: o, began: time.Now(), out: os.Stdout}
	defer d.stop()
	if err := d.run(ctx); err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(d.out, "\nInterrupted")
			return nil
		}
		if d.cluster != nil {
			fmt.Fprintf(d.out, "\nLogs of every process: %s\n", d.cluster.LogDir())
		}
		return err
	}
	if o.exit {
		return nil
	}
	fmt.Fprintln(d.out, "Press Ctrl-C to stop the cluster and every process the demo started.")
	<-ctx.Done()
	stop()
	fmt.Fprintln(d.out)
	return nil
}

// stage prints a stage's title, runs it and prints how long it took.
func (d *demoRun) stage(title string, fn func() error) error {
	fmt.Fprintf(d.out, "\n[%6.1fs] %s\n", time.Since(d.began).Seconds(), title)
	began := time.Now()
	if err := fn(); err != nil {
		fmt.Fprintf(d.out, "          failed after %.1fs: %v\n", time.Since(began).Seconds(), err)
		return err
	}
	fmt.Fprintf(d.out, "          done in %.1fs\n", time.Since(began).Seconds())
	return nil
}

func (d *demoRun) run(ctx context.Context) error {
	fmt.Fprintf(d.out, "KairoLog demo: a local Kubernetes cluster, the operator from its Helm chart, the samples, one produce/fetch round.\n")
	err := d.stage("Starting the local cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, a process-backed node)", func() error {
		cluster, err := localcluster.Start(ctx, localcluster.Options{
			StateDir:     d.o.stateDir,
			RepoDir:      d.o.repoDir,
			ImageLayout:  d.o.layout,
			BinaryImages: binaryImages(d.o.binary, d.o.images),
			Progress:     indent{d.out},
		})
		if err != nil {
			return err
		}
		d.cluster = cluster
		d.logDir = cluster.LogDir()
		redirectKlog(filepath.Join(d.logDir, "kairo-local.log"))
		helmHome := filepath.Join(cluster.StateDir(), "helm")
		d.env = append(os.Environ(),
			"KUBECONFIG="+cluster.Kubeconfig(),
			"HELM_CACHE_HOME="+filepath.Join(helmHome, "cache"),
			"HELM_CONFIG_HOME="+filepath.Join(helmHome, "config"),
			"HELM_DATA_HOME="+filepath.Join(helmHome, "data"))
		return nil
	})
	if err != nil {
		return err
	}
	chart := filepath.Join(d.o.repoDir, "charts", "kairolog-operator")
	err = d.stage("Installing the operator from the Helm chart", func() error {
		return d.command(ctx, "helm.log", d.o.helm, "install", demoRelease, chart,
			"--namespace", demoNamespace, "--create-namespace",
			"--set", "image.tag="+demoImageTag, "--set", "brokerImage.tag="+demoImageTag,
			"--wait", "--timeout", "5m")
	})
	if err != nil {
		return err
	}
	err = d.stage("Applying config/samples/ (a three-broker KairoCluster, a Topic, a ConsumerGroup)", func() error {
		return d.command(ctx, "kubectl-apply.log", "kubectl", "apply", "-k", filepath.Join(d.o.repoDir, "config", "samples"))
	})
	if err != nil {
		return err
	}
	var target roundTarget
	err = d.stage("Waiting for the KairoCluster, the Topic and the ConsumerGroup to be Ready", func() error {
		var err error
		target, err = d.waitReady(ctx)
		return err
	})
	if err != nil {
		d.showState(ctx)
		return err
	}
	var fetched string
	err = d.stage(fmt.Sprintf("Producing and fetching one record through kubectl port-forward svc/%s %d", target.service, d.o.localPort), func() error {
		var err error
		fetched, err = d.round(ctx, target)
		return err
	})
	if err != nil {
		return err
	}
	d.printNext(target, fetched)
	return nil
}

// stop stops the cluster (every pod and control-plane process) and says so.
func (d *demoRun) stop() {
	if d.cluster == nil {
		return
	}
	fmt.Fprintf(d.out, "[%6.1fs] Stopping the cluster and every process the demo started\n", time.Since(d.began).Seconds())
	began := time.Now()
	d.cluster.Stop()
	fmt.Fprintf(d.out, "          stopped in %.1fs\n", time.Since(began).Seconds())
}

// command runs a CLI with the cluster's kubeconfig, echoing the command
// line and its output (also kept in logName).
func (d *demoRun) command(ctx context.Context, logName, name string, args ...string) error {
	shown := filepath.Base(name)
	fmt.Fprintf(d.out, "          $ %s %s\n", shown, strings.Join(relativeArgs(args, d.o.repoDir), " "))
	log, err := os.Create(filepath.Join(d.logDir, logName))
	if err != nil {
		return err
	}
	defer log.Close()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = d.env
	cmd.Stdout = io.MultiWriter(&out, log)
	cmd.Stderr = cmd.Stdout
	err = cmd.Run()
	text := strings.TrimRight(out.String(), "\n")
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", shown, err, text)
	}
	// helm prints the chart's NOTES, which the demo's own summary replaces.
	lines := strings.Split(text, "\n")
	if len(lines) > 8 {
		lines = append(lines[:8], fmt.Sprintf("(full output in %s)", filepath.Join(d.logDir, logName)))
	}
	for _, l := range lines {
		fmt.Fprintf(d.out, "          %s\n", l)
	}
	return nil
}

// relativeArgs shows paths inside the repository relative to it, as a user
// would type them from its root.
func relativeArgs(args []string, repo string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if rel, err := filepath.Rel(repo, a); err == nil && filepath.IsAbs(a) && !strings.HasPrefix(rel, "..") {
			a = rel
		}
		out[i] = a
	}
	return out
}

// printNext tells the user how to reach the cluster and what to try.
func (d *demoRun) printNext(t roundTarget, fetched string) {
	kubeconfig := d.cluster.Kubeconfig()
	group := t.group
	if group == "" {
		group = "demo"
	}
	forward, local := fmt.Sprintf("svc/%s %d", t.service, d.o.localPort), strconv.Itoa(d.o.localPort)
	if d.heldPort != "" {
		// The user's own port-forward would fail the same way.
		forward, local = fmt.Sprintf("svc/%s %d:%d", t.service, d.forwardPort, d.o.localPort), strconv.Itoa(d.forwardPort)
		fmt.Fprintf(d.out, "\nLocal port %d is held by %s, so the commands below forward %d.\n", d.o.localPort, d.heldPort, d.forwardPort)
	}
	fmt.Fprintf(d.out, `
KairoLog is running (up in %.0fs): %q went in and came back out.

Try it from another shell (a third one for the commands after port-forward):

  export KUBECONFIG=%s

  # brokers, partitions and consumer lag, as the operator reports them
  kubectl get kc,kt,kcg

  # the brokers' HTTP API, as on any cluster
  kubectl port-forward %s
  curl -s -X POST localhost:%s/produce -d '{"topic":"%s","partition":0,"message":"hello"}'
  curl -s 'localhost:%s/fetch?topic=%s&partition=0&offset=0'

  # consume as a member of the group (Ctrl-C leaves it); meanwhile its
  # members and lag show in the ConsumerGroup (refreshed every 30 s)
  bin/kairoctl consume %s --group %s --from-beginning
  kubectl get kcg %s

  kubectl logs %s-0; bin/helm list -A   # the operator is the chart's release %s

Logs of the control plane and the node: %s
`, time.Since(d.began).Seconds(), fetched, kubeconfig, forward, local, t.topic, local, t.topic, t.topic, group, group,
		t.service, demoRelease, d.logDir)
}

// redirectKlog keeps client-go's messages out of the terminal.
func redirectKlog(path string) {
	if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		klog.LogToStderr(false)
		klog.SetOutput(f)
	}
}

// indent prefixes each line written through it, so the cluster's own
// progress reads as part of its stage.
type indent struct{ w io.Writer }

func (i indent) Write(p []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(p), "\n") {
		if line == "" {
			continue
		}
		if _, err := io.WriteString(i.w, "          "+line); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
