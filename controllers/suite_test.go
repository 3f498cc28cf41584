/*
Copyright 2026 The KairoLog Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controllers

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/internal/localcluster"
)

// These tests use Ginkgo (BDD-style Go testing framework). Refer to
// http://onsi.github.io/ginkgo/ to learn more about Ginkgo.

// reconcilerSetups register the reconcilers under test with the suite's
// manager; each reconciler's test file appends its own in an init function, so
// the suite starts whichever reconcilers the package has.
var reconcilerSetups []func(mgr ctrl.Manager) error

var (
	ctx       context.Context
	cancel    context.CancelFunc
	testEnv   *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	// controllerManager is the real kube-controller-manager (StatefulSet,
	// garbage-collector and PersistentVolume controllers) running against the test API
	// server, so StatefulSets create pods and claims and deleting an owner
	// removes its children. Nil when its binary is missing.
	controllerManager *exec.Cmd
	// managerCalls records every request the suite's manager (all the
	// reconcilers, their caches and event recorders) sends to the API server.
	managerCalls = &requestLog{}
	// managerStopped is closed when the suite's manager has returned, with
	// every watch it held closed.
	managerStopped = make(chan struct{})
)

// managerShutdown bounds how long the manager may take to stop: its own
// graceful shutdown timeout (30 s) and some slack.
const managerShutdown = 45 * time.Second

func TestControllers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver, etcd, kube-controller-manager and brokers; skipped with -short")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Controllers Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	ctx, cancel = context.WithCancel(context.TODO())

	Expect(kairov1alpha1.AddToScheme(scheme.Scheme)).To(Succeed())

	By("starting a real kube-apiserver and etcd")
	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	// Without KUBEBUILDER_ASSETS (a run from an IDE), use the binaries that
	// `make k8s-binaries` builds into bin/k8s.
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		testEnv.BinaryAssetsDirectory = filepath.Join("..", "bin", "k8s")
	}

	var err error
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	Expect(cfg).NotTo(BeNil())

	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme.Scheme})
	Expect(err).NotTo(HaveOccurred())
	Expect(k8sClient).NotTo(BeNil())

	startControllerManager()

	if len(reconcilerSetups) == 0 {
		close(managerStopped)
		return
	}
	By("starting the manager with the reconcilers under test")
	mgrCfg := rest.CopyConfig(cfg)
	mgrCfg.Wrap(managerCalls.wrap)
	mgr, err := ctrl.NewManager(mgrCfg, ctrl.Options{
		Scheme:  scheme.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		// The cache the real manager runs with (cmd/manager).
		Cache: CacheOptions(nil),
	})
	Expect(err).NotTo(HaveOccurred())
	for _, setup := range reconcilerSetups {
		Expect(setup(mgr)).To(Succeed())
	}
	go func() {
		defer GinkgoRecover()
		defer close(managerStopped)
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
})

var _ = AfterSuite(func() {
	By("stopping the test environment")
	cancel()
	// The API server drains open requests before it exits; a watch the
	// manager has not closed yet would hold it past envtest's stop timeout.
	Eventually(managerStopped).WithTimeout(managerShutdown).Should(BeClosed())
	stopControllerManager()
	Expect(testEnv.Stop()).To(Succeed())
})

// startControllerManager runs bin/k8s/kube-controller-manager with the
// StatefulSet, garbage-collector and PersistentVolume controllers against
// the test API server, as an admin user, and beside it the local cluster's
// volume provisioner for the StorageClasses that name it
// (localcluster.ProvisionerName): the brokers' claims are provisioned,
// bound and grown as on a cluster with a storage add-on.
func startControllerManager() {
	GinkgoHelper()
	dir := testEnv.BinaryAssetsDirectory
	if dir == "" {
		dir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	bin := filepath.Join(dir, "kube-controller-manager")
	if _, err := os.Stat(bin); err != nil {
		fmt.Fprintf(GinkgoWriter, "No kube-controller-manager at %s: specs that need StatefulSet pods are skipped\n", bin)
		return
	}
	By("starting kube-controller-manager (StatefulSet, garbage-collector and PersistentVolume controllers)")
	user, err := testEnv.AddUser(envtest.User{Name: "kube-controller-manager", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	kubeconfig, err := user.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	work, err := os.MkdirTemp("", "kairolog-kcm-")
	Expect(err).NotTo(HaveOccurred())
	kubeconfigPath := filepath.Join(work, "kubeconfig")
	Expect(os.WriteFile(kubeconfigPath, kubeconfig, 0o600)).To(Succeed())
	logPath := filepath.Join(work, "kube-controller-manager.log")
	logFile, err := os.Create(logPath)
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(bin,
		"--kubeconfig="+kubeconfigPath,
		"--controllers=statefulset-controller,garbage-collector-controller,persistentvolume-binder-controller",
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--kube-api-qps=200", "--kube-api-burst=400",
		"--v=1",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	Expect(cmd.Start()).To(Succeed())
	controllerManager = cmd
	fmt.Fprintf(GinkgoWriter, "kube-controller-manager pid %d, log %s\n", cmd.Process.Pid, logPath)
	DeferCleanup(func() { logFile.Close() })

	volumes := filepath.Join(work, "volumes")
	Expect(os.MkdirAll(volumes, 0o755)).To(Succeed())
	provisionerLog, err := os.Create(filepath.Join(work, "provisioner.log"))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { provisionerLog.Close() })
	clientset, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	go localcluster.RunProvisioner(ctx, clientset, volumes, "envtest", slog.New(slog.NewTextHandler(provisionerLog, nil)))
}

func stopControllerManager() {
	if controllerManager == nil {
		return
	}
	_ = controllerManager.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = controllerManager.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = controllerManager.Process.Kill()
		<-done
	}
}

// requireControllerManager skips a spec that needs real StatefulSet pods
// and garbage collection when kube-controller-manager is not running.
func requireControllerManager() {
	if controllerManager == nil {
		Skip("kube-controller-manager is not available (make k8s-binaries)")
	}
}
