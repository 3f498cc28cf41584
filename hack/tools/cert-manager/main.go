// Command cert-manager-controller runs cert-manager's own certificate and
// issuer controllers (the packages of github.com/cert-manager/cert-manager,
// pinned in this directory's go.mod) against an API server named by a
// kubeconfig. cert-manager publishes the command that wires them, its
// cmd/controller, as a module the Go module proxy does not serve
// (github.com/cert-manager/cert-manager/controller-binary, which replaces
// cert-manager with ../../), so this file does that wiring: the controllers a
// self-signed and a CA Issuer need, and nothing of ACME, Vault, Venafi or the
// ingress and gateway shims.
//
// The operator's envtest specs start it to prove that KairoCluster and
// KairoUser certificates named through spec.security.ca.issuerRef are issued,
// mounted and renewed by cert-manager itself.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
)

// controllers are the control loops a Certificate issued by a self-signed or
// CA Issuer or ClusterIssuer goes through, by their registered names.
var controllers = []string{
	issuers.ControllerName,
	clusterissuers.ControllerName,
	trigger.ControllerName,
	keymanager.ControllerName,
	requestmanager.ControllerName,
	readiness.ControllerName,
	issuing.ControllerName,
	revisionmanager.ControllerName,
	approver.ControllerName,
	crca.CRControllerName,
	crselfsigned.CRControllerName,
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server to run against")
	clusterResourceNamespace := flag.String("cluster-resource-namespace", "cert-manager", "namespace of the Secrets a ClusterIssuer refers to")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *clusterResourceNamespace); err != nil {
		fmt.Fprintln(os.Stderr, "cert-manager-controller:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, clusterResourceNamespace string) error {
	logf.InitLogs()
	ctx = logf.NewContext(ctx, logf.Log, "controller")

	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   50,
		KubernetesAPIBurst: 100,
		IssuerOptions:      controller.IssuerOptions{ClusterResourceNamespace: clusterResourceNamespace},
		CertificateOptions: controller.CertificateOptions{
			// cert-manager's own defaults for a failed CertificateRequest.
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	})
	if err != nil {
		return fmt.Errorf("building the controller context: %w", err)
	}

	var loops []controller.Interface
	for _, name := range controllers {
		construct, ok := controller.Known()[name]
		if !ok {
			return fmt.Errorf("controller %q is not registered", name)
		}
		loop, err := construct(factory)
		if err != nil {
			return fmt.Errorf("constructing controller %q: %w", name, err)
		}
		loops = append(loops, loop)
	}

	// The informers are shared by every loop; they start once all loops
	// have registered theirs.
	shared, err := factory.Build()
	if err != nil {
		return fmt.Errorf("building the shared context: %w", err)
	}
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.KubeSharedInformerFactory.Start(ctx.Done())

	errs := make(chan error, len(loops))
	var wg sync.WaitGroup
	for i, loop := range loops {
		wg.Go(func() {
			if err := loop.Run(5, ctx); err != nil {
				errs <- fmt.Errorf("controller %q: %w", controllers[i], err)
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
