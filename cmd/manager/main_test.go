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

package main

import (
	"flag"
	"io"
	"slices"
	"testing"
	"time"
)

func parse(t *testing.T, args ...string) (*options, error) {
	t.Helper()
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return parseFlags(fs, args)
}

func TestFlagDefaults(t *testing.T) {
	o, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	if o.metricsAddr != ":8080" || o.probeAddr != ":8081" || o.leaderElect ||
		o.defaultBrokerImage != "kairolog/broker:dev" || o.resyncInterval != 30*time.Second ||
		o.brokerTimeout != 10*time.Second || len(o.namespaces()) != 0 {
		t.Errorf("defaults %+v", o)
	}
}

func TestFlags(t *testing.T) {
	o, err := parse(t, "--metrics-bind-address=0", "--health-probe-bind-address=127.0.0.1:9000", "--leader-elect",
		"--default-broker-image=registry.example.com/kairolog/broker:1.2", "--resync-interval=1m",
		"--watch-namespaces= team-a, ,team-b", "--broker-timeout=3s", "--zap-log-level=debug")
	if err != nil {
		t.Fatal(err)
	}
	if o.metricsAddr != "0" || o.probeAddr != "127.0.0.1:9000" || !o.leaderElect ||
		o.defaultBrokerImage != "registry.example.com/kairolog/broker:1.2" || o.resyncInterval != time.Minute ||
		o.brokerTimeout != 3*time.Second {
		t.Errorf("flags %+v", o)
	}
	if ns := o.namespaces(); !slices.Equal(ns, []string{"team-a", "team-b"}) {
		t.Errorf("namespaces %q", ns)
	}
	if _, err := parse(t, "--resync-interval=0s"); err == nil {
		t.Error("a zero resync interval was accepted")
	}
}
