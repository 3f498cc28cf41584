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

// Command manager runs the KairoLog operator: the controller-runtime manager
// with the KairoCluster, Topic and ConsumerGroup reconcilers, its metrics and
// health endpoints, and optional leader election.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/controllers"
	"github.com/kairolog/kairolog/controllers/resources"
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kairov1alpha1.AddToScheme(scheme))
}

// options are the manager's flags.
type options struct {
	metricsAddr             string
	probeAddr               string
	leaderElect             bool
	leaderElectionNamespace string
	defaultBrokerImage      string
	resyncInterval          time.Duration
	watchNamespaces         string
	brokerTimeout           time.Duration
	zap                     zap.Options
}

func parseFlags(fs *flag.FlagSet, args []string) (*options, error) {
	o := &options{}
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "address the metrics endpoint binds to; \"0\" disables it")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "address the /healthz and /readyz probes bind to")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "elect a leader among manager replicas, so that one reconciles at a time")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader-election lease (default: the manager's own namespace in a cluster)")
	fs.StringVar(&o.defaultBrokerImage, "default-broker-image", resources.DefaultBrokerImage, "broker image of KairoClusters that set no spec.image")
	fs.DurationVar(&o.resyncInterval, "resync-interval", controllers.DefaultResyncInterval, "how often a quiet cluster's broker-observed status is refreshed")
	fs.StringVar(&o.watchNamespaces, "watch-namespaces", "", "comma-separated namespaces to watch; empty watches all")
	fs.DurationVar(&o.brokerTimeout, "broker-timeout", controllers.DefaultBrokerTimeout, "bound on every call to a broker's admin API")
	o.zap.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if o.resyncInterval <= 0 || o.brokerTimeout <= 0 {
		return nil, fmt.Errorf("--resync-interval and --broker-timeout must be positive")
	}
	return o, nil
}

// namespaces splits --watch-namespaces.
func (o *options) namespaces() []string {
	var out []string
	for _, ns := range strings.Split(o.watchNamespaces, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

func main() {
	o, err := parseFlags(flag.CommandLine, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	if err := run(o); err != nil {
		setupLog.Error(err, "Manager stopped")
		os.Exit(1)
	}
}

func run(o *options) error {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress:        o.probeAddr,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              "kairolog-operator.kairolog.io",
		LeaderElectionNamespace:       o.leaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		Cache:                         controllers.CacheOptions(o.namespaces()),
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// One keep-alive transport for every controller's broker calls.
	// It reads the operator's certificate of each cluster from the cache,
	// for clusters whose HTTP listener serves TLS.
	brokers := &controllers.ServiceBrokerClients{Timeout: o.brokerTimeout, Reader: mgr.GetClient()}
	if err := (&controllers.KairoClusterReconciler{
		Client:         mgr.GetClient(),
		APIReader:      mgr.GetAPIReader(),
		Scheme:         mgr.GetScheme(),
		Brokers:        brokers,
		DefaultImage:   o.defaultBrokerImage,
		ResyncInterval: o.resyncInterval,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the KairoCluster controller: %w", err)
	}
	if err := (&controllers.TopicReconciler{
		Client:         mgr.GetClient(),
		Scheme:         mgr.GetScheme(),
		Brokers:        brokers,
		ResyncInterval: o.resyncInterval,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the Topic controller: %w", err)
	}
	if err := (&controllers.ConsumerGroupReconciler{
		Client:         mgr.GetClient(),
		Scheme:         mgr.GetScheme(),
		Brokers:        brokers,
		ResyncInterval: o.resyncInterval,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the ConsumerGroup controller: %w", err)
	}
	if err := (&controllers.KairoUserReconciler{
		Client:         mgr.GetClient(),
		APIReader:      mgr.GetAPIReader(),
		Scheme:         mgr.GetScheme(),
		Brokers:        brokers,
		ResyncInterval: o.resyncInterval,
		Namespaces:     o.namespaces(),
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the KairoUser controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	setupLog.Info("Starting the manager", "watchNamespaces", o.namespaces(), "defaultBrokerImage", o.defaultBrokerImage,
		"resyncInterval", o.resyncInterval.String(), "leaderElection", o.leaderElect)
	return mgr.Start(ctrl.SetupSignalHandler())
}
