package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/internal/localcluster"
)

// e2eEnv is the variable that turns the suite on; `go test ./...` leaves
// it unset and skips the suite.
const e2eEnv = "KAIRO_E2E"

// keepStateEnv keeps the cluster's state directory (logs, pod sandboxes)
// after a passing run too; after a failing run it is always kept.
const keepStateEnv = "KAIRO_E2E_KEEP_STATE"

// suite holds what every scenario shares: one local cluster for the whole
// run, its admin kubeconfig for kubectl and helm, and Go clients that only
// read and wait.
type suite struct {
	repo       string
	bin        string
	stateDir   string
	workDir    string // kubectl port-forward and kairoctl logs
	cluster    *localcluster.Cluster
	kubeconfig string
	k8s        client.Client
	watcher    client.WithWatch
	clientset  kubernetes.Interface

	began   time.Time
	cleanup []func()
}

var s *suite

func TestE2E(t *testing.T) {
	if os.Getenv(e2eEnv) != "1" {
		t.Skipf("the end-to-end suite runs a whole local cluster; run it with `make test-e2e` (or %s=1)", e2eEnv)
	}
	RegisterFailHandler(Fail)
	suiteConfig, reporterConfig := GinkgoConfiguration()
	// Scenarios build on each other; stop at the first failure so its
	// diagnostics are the last thing printed.
	suiteConfig.FailFast = true
	RunSpecs(t, "KairoLog end to end", suiteConfig, reporterConfig)
}

var _ = BeforeSuite(func(ctx SpecContext) {
	began := time.Now()
	repo, err := localcluster.FindRepoDir()
	Expect(err).NotTo(HaveOccurred())
	Expect(os.Geteuid()).To(Equal(0), "the local node runs pods in their own namespaces and needs root")
	bin := filepath.Join(repo, "bin")
	for _, f := range []string{"k8s/etcd", "k8s/kube-apiserver", "k8s/kube-controller-manager", "k8s/kube-scheduler",
		"broker", "manager", "kairoctl", "helm"} {
		_, err := os.Stat(filepath.Join(bin, f))
		Expect(err).NotTo(HaveOccurred(), "bin/%s is missing: run `make test-e2e`, which builds it", f)
	}
	_, err = exec.LookPath("kubectl")
	Expect(err).NotTo(HaveOccurred(), "kubectl must be on PATH")

	stateDir, err := os.MkdirTemp("", "kairolog-e2e-")
	Expect(err).NotTo(HaveOccurred())
	s = &suite{repo: repo, bin: bin, stateDir: stateDir, workDir: filepath.Join(stateDir, "e2e"), began: began}
	Expect(os.MkdirAll(s.workDir, 0o755)).To(Succeed())
	// The node agent runs in this process; client-go's own log lines
	// (klog) go to a file instead of between the scenarios' output.
	klogFile, err := os.Create(filepath.Join(s.workDir, "klog.log"))
	Expect(err).NotTo(HaveOccurred())
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	Expect(klogFlags.Set("logtostderr", "false")).To(Succeed())
	Expect(klogFlags.Set("alsologtostderr", "false")).To(Succeed())
	Expect(klogFlags.Set("stderrthreshold", "FATAL")).To(Succeed())
	klog.SetOutput(klogFile)
	progress := GinkgoWriter
	cluster, err := localcluster.Start(ctx, localcluster.Options{
		StateDir: filepath.Join(stateDir, "cluster"),
		RepoDir:  repo,
		Progress: progress,
	})
	Expect(err).NotTo(HaveOccurred())
	s.cluster = cluster
	s.kubeconfig = cluster.Kubeconfig()
	keepPodLogs()

	scheme := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(kairov1alpha1.AddToScheme(scheme)).To(Succeed())
	Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
	cfg := cluster.RESTConfig()
	cfg.QPS, cfg.Burst = 50, 100
	s.k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	s.watcher, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	s.clientset, err = kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	say("local cluster up in %s; state in %s", since(began), stateDir)
}, NodeTimeout(4*time.Minute))

var _ = AfterSuite(func() {
	if s == nil {
		return
	}
	// Port-forwards and consumers first: they talk to the cluster.
	for i := len(s.cleanup) - 1; i >= 0; i-- {
		s.cleanup[i]()
	}
	if s.cluster != nil {
		s.cluster.Stop()
	}
	failed := CurrentSpecReport().Failed() || suiteFailed
	if failed || os.Getenv(keepStateEnv) != "" {
		say("cluster state (logs, pod sandboxes) kept in %s", s.stateDir)
	} else {
		_ = os.RemoveAll(s.stateDir)
	}
	say("whole suite took %s", since(s.began))
})

// suiteFailed records a failed scenario for AfterSuite, whose own report
// does not carry the scenarios' results.
var suiteFailed bool

// Each scenario prints how long it took, and a failed one prints what a
// person would look at first: conditions, events and logs.
var _ = ReportAfterEach(func(report SpecReport) {
	if report.State.Is(types.SpecStateSkipped) {
		return
	}
	status := "passed"
	if report.Failed() {
		status = "FAILED"
		suiteFailed = true
	}
	fmt.Fprintf(os.Stdout, "--- scenario %q %s in %s\n", report.LeafNodeText, status, report.RunTime.Round(100*time.Millisecond))
})

var _ = ReportAfterSuite("scenario durations", func(report Report) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nscenario durations:\n")
	for _, r := range report.SpecReports {
		if r.LeafNodeType != types.NodeTypeIt {
			continue
		}
		fmt.Fprintf(&b, "  %-8s %7s  %s\n", r.State, r.RunTime.Round(100*time.Millisecond), r.LeafNodeText)
	}
	fmt.Fprintf(&b, "  total %s\n", report.RunTime.Round(time.Second))
	fmt.Fprint(os.Stdout, b.String())
})

// onCleanup registers f to run in AfterSuite (last registered, first run),
// whatever happens to the scenarios.
func onCleanup(f func()) { s.cleanup = append(s.cleanup, f) }

// say prints a progress line with the time since the suite began.
func say(format string, args ...any) {
	at := time.Duration(0)
	if s != nil {
		at = time.Since(s.began)
	}
	fmt.Fprintf(GinkgoWriter, "[%6.1fs] %s\n", at.Seconds(), fmt.Sprintf(format, args...))
}

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }
