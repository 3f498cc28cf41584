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

package packaging_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kairolog/kairolog/internal/syncbuf"
)

var (
	managerOnce sync.Once
	managerBin  string
	managerErr  error
)

// buildManager builds cmd/manager once per test run.
func buildManager(t *testing.T) string {
	t.Helper()
	managerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kairolog-manager")
		if err != nil {
			managerErr = err
			return
		}
		managerBin = filepath.Join(dir, "manager")
		cmd := exec.Command("go", "build", "-o", managerBin, "./cmd/manager")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			managerErr = fmt.Errorf("go build ./cmd/manager: %v\n%s", err, out)
		}
	})
	if managerErr != nil {
		t.Fatal(managerErr)
	}
	return managerBin
}

// probeAddrLog finds the address of the manager's health probes in its
// "starting server" log line, JSON or console encoded.
var probeAddrLog = regexp.MustCompile(`"name":\s*"health probe",\s*"addr":\s*"([^"]+)"`)

// TestChartStartsTheManager runs the manager binary with the arguments the
// chart renders, authenticated as the chart's ServiceAccount and holding only
// the permissions of the chart's (really created) RBAC objects. Its
// controllers must sync their caches — every list and watch allowed — and
// take the leader-election lease; nothing may be forbidden. This is what
// proves the chart's RBAC is enough, cluster-wide and per namespace, and that
// the manager understands every flag the chart passes.
func TestChartStartsTheManager(t *testing.T) {
	c := apiServer(t)
	bin := buildManager(t)
	createNamespaces(t, c, releaseNamespace, "team-a")
	applyDryRun(t, c, mustRender(t, "").all("CustomResourceDefinition"))

	for _, tc := range []struct{ name, values string }{
		{"cluster-wide", ""},
		{"watching team-a", "watchNamespaces: [team-a]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRender(t, tc.values)
			grantChartRBAC(t, c, r)
			d := r.deployment(t)
			m := manager(t, d)
			sa := d.Spec.Template.Spec.ServiceAccountName
			user, err := testEnv.AddUser(envtest.User{
				Name:   fmt.Sprintf("system:serviceaccount:%s:%s", releaseNamespace, sa),
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + releaseNamespace, "system:authenticated"},
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			kubeconfig, err := user.KubeConfig()
			if err != nil {
				t.Fatal(err)
			}
			kubeconfigPath := filepath.Join(t.TempDir(), "kubeconfig")
			if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
				t.Fatal(err)
			}

			// The chart's arguments, with the ports moved to ones the
			// manager picks (port 0); it logs where its probes listen.
			var args []string
			for _, a := range m.Args {
				switch {
				case strings.HasPrefix(a, "--health-probe-bind-address="):
					a = "--health-probe-bind-address=127.0.0.1:0"
				case strings.HasPrefix(a, "--metrics-bind-address=") && a != "--metrics-bind-address=0":
					a = "--metrics-bind-address=127.0.0.1:0"
				}
				args = append(args, a)
			}

			var logs syncbuf.Buffer
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfigPath)
			cmd.Stdout, cmd.Stderr = &logs, &logs
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer func() {
				_ = cmd.Process.Signal(syscall.SIGTERM)
				select {
				case <-exited:
				case <-time.After(15 * time.Second):
					_ = cmd.Process.Kill()
					<-exited
				}
				if t.Failed() {
					t.Logf("manager output:\n%s", logs.String())
				}
			}()

			deadline := time.Now().Add(90 * time.Second)
			for {
				out := logs.String()
				started := strings.Count(out, "Starting Controller")
				running := strings.Count(out, "Starting workers")
				leader := strings.Contains(strings.ToLower(out), "successfully acquired lease")
				if strings.Contains(out, "forbidden") {
					t.Fatalf("the manager was refused something with the chart's RBAC")
				}
				probes := probeAddrLog.FindStringSubmatch(out)
				if started > 0 && running == started && leader && probes != nil && ready(probes[1]) {
					break
				}
				select {
				case err := <-exited:
					exited <- err
					t.Fatalf("the manager exited: %v", err)
				case <-time.After(200 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					t.Fatalf("the manager did not start every controller and take the lease in time (%d of %d controllers running, leader %v)", running, started, leader)
				}
			}
			// Give a late watch a moment to be refused before passing.
			time.Sleep(2 * time.Second)
			if strings.Contains(logs.String(), "forbidden") {
				t.Fatalf("the manager was refused something with the chart's RBAC")
			}
		})
	}
}

func ready(addr string) bool {
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// grantChartRBAC creates the chart's RBAC objects for real, and deletes them
// when the test ends so that the next values start from nothing.
func grantChartRBAC(t *testing.T, c client.Client, r *rendered) {
	t.Helper()
	for _, o := range r.objs {
		switch o.GetKind() {
		case "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
		default:
			continue
		}
		obj := o.DeepCopy()
		if err := c.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(obj), client.ForceOwnership, client.FieldOwner(fieldOwner)); err != nil {
			t.Fatalf("creating %s: %v", describe(o), err)
		}
		t.Cleanup(func() {
			del := &unstructured.Unstructured{}
			del.SetGroupVersionKind(obj.GroupVersionKind())
			del.SetNamespace(obj.GetNamespace())
			del.SetName(obj.GetName())
			// t.Context() is already cancelled when cleanups run.
			if err := c.Delete(context.Background(), del); err != nil {
				t.Errorf("deleting %s: %v", describe(obj), err)
			}
		})
	}
}
