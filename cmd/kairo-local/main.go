// Command kairo-local runs a local Kubernetes cluster for the KairoLog demo
// and end-to-end suites: a real control plane (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler from bin/k8s), an OCI registry
// serving the images `make images` built, and a node that pulls them and
// runs pods as local processes in their own namespaces.
//
//	kairo-local up --state-dir .kairo/cluster [--images bin/images/oci] [--binary-images]
//	kairo-local demo [--state-dir .kairo/demo] [--exit-after-round]
//
// up writes <state-dir>/kubeconfig, stays up until SIGINT or SIGTERM, then
// stops every process it started. demo is `make demo`: it also installs the
// operator from the Helm chart, applies config/samples/, waits for them to
// be Ready and produces and fetches one record through kubectl
// port-forward before handing the cluster to the user.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/kairolog/kairolog/internal/localcluster"
	"github.com/kairolog/kairolog/internal/nodeagent"
)

const usage = `Usage: kairo-local up --state-dir DIR [flags]

Starts a local Kubernetes cluster whose node runs pods as local processes,
writes DIR/kubeconfig and runs until interrupted.

Flags:
`

func main() {
	var run func([]string) error
	switch {
	case len(os.Args) >= 2 && os.Args[1] == "up":
		run = up
	case len(os.Args) >= 2 && os.Args[1] == "demo":
		run = demo
	default:
		fmt.Fprint(os.Stderr, usage)
		upFlags(os.Stderr).fs.PrintDefaults()
		fmt.Fprint(os.Stderr, "\n")
		fmt.Fprint(os.Stderr, demoUsage)
		demoFlags(os.Stderr).fs.PrintDefaults()
		os.Exit(2)
	}
	if err := run(os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "kairo-local:", err)
		os.Exit(1)
	}
}

type imageFlag struct {
	m   nodeagent.ImageMap
	set bool
}

func (f *imageFlag) String() string { return "" }
func (f *imageFlag) Set(v string) error {
	f.set = true
	return f.m.Set(v)
}

// binaryImages is the cluster's BinaryImages option: nil (pull every
// image) unless --binary-images or --image-map asked for the fallback.
func binaryImages(on bool, f imageFlag) nodeagent.ImageMap {
	if !on && !f.set {
		return nil
	}
	return f.m
}

type options struct {
	stateDir     string
	repoDir      string
	nodeName     string
	layout       string
	binaryImages bool
	images       imageFlag
	fs           *flag.FlagSet
}

func upFlags(out io.Writer) *options {
	o := &options{images: imageFlag{m: nodeagent.ImageMap{}}}
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.stateDir, "state-dir", "", "directory for the cluster's state, logs and kubeconfig (emptied on start)")
	fs.StringVar(&o.repoDir, "repo", "", "repository root holding bin/k8s, bin/broker and bin/manager (default: found from the working directory)")
	fs.StringVar(&o.nodeName, "node-name", localcluster.DefaultNodeName, "name of the node")
	fs.StringVar(&o.layout, "images", "", "OCI image layout the cluster's registry serves (default: <repo>/bin/images/oci, written by make images)")
	fs.BoolVar(&o.binaryImages, "binary-images", false, "developer fallback: run bin/broker and bin/manager for the kairolog images instead of pulling them")
	fs.Var(&o.images, "image-map", "with --binary-images, map an image repository to a binary, repo=path (repeatable; implies --binary-images)")
	o.fs = fs
	return o
}

func up(args []string) error {
	o := upFlags(os.Stderr)
	o.fs.Usage = func() {
		fmt.Fprint(os.Stderr, usage)
		o.fs.PrintDefaults()
	}
	if err := o.fs.Parse(args); err != nil {
		return err
	}
	if o.stateDir == "" {
		o.fs.Usage()
		return errors.New("--state-dir is required")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Println("Starting local cluster")
	cluster, err := localcluster.Start(ctx, localcluster.Options{
		StateDir:     o.stateDir,
		RepoDir:      o.repoDir,
		NodeName:     o.nodeName,
		ImageLayout:  o.layout,
		BinaryImages: binaryImages(o.binaryImages, o.images),
		Progress:     os.Stdout,
	})
	if err != nil {
		return err
	}
	// client-go inside this process logs through klog; keep it out of the
	// terminal and next to the other component logs.
	if f, err := os.OpenFile(filepath.Join(cluster.LogDir(), "kairo-local.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		klog.LogToStderr(false)
		klog.SetOutput(f)
		defer f.Close()
	}
	fmt.Printf(`
Cluster is up. In another shell:

  export KUBECONFIG=%s
  kubectl get nodes

Logs: %s (%s)
Press Ctrl-C to stop the cluster.
`, cluster.Kubeconfig(), cluster.LogDir(), strings.Join(logNames(cluster.LogDir()), ", "))

	<-ctx.Done()
	stop()
	fmt.Println("\nStopping local cluster")
	began := time.Now()
	cluster.Stop()
	fmt.Printf("Stopped in %.1fs\n", time.Since(began).Seconds())
	return nil
}

func logNames(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
