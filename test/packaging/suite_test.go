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

// Package packaging_test checks what a user installs and reads: the Helm
// chart rendered with the Helm SDK and linted, the kustomize bases, both
// applied with server-side dry-run to a real kube-apiserver, the Dockerfile's
// build lines against the Makefile's, and the docs against the code.
package packaging_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// repoRoot is the repository root, seen from this package's directory.
var repoRoot = filepath.Join("..", "..")

// fieldOwner names this test as the field manager of what it applies.
const fieldOwner = "kairolog-packaging-test"

var (
	envOnce sync.Once
	testEnv *envtest.Environment
	k8s     client.Client
	envErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if testEnv != nil {
		if err := testEnv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the test API server:", err)
		}
	}
	os.Exit(code)
}

// apiServer starts a real kube-apiserver and etcd the first time a test asks
// for them. Only the Prometheus Operator's ServiceMonitor CRD is installed up
// front; KairoLog's CRDs are created from what each test renders.
func apiServer(t *testing.T) client.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("starts kube-apiserver and etcd; skipped with -short")
	}
	envOnce.Do(func() {
		testEnv = &envtest.Environment{
			// cert-manager's CRDs (`make cert-manager`), for the RBAC rules on
			// its Certificates (spec.security.ca.issuerRef).
			CRDDirectoryPaths: []string{
				filepath.Join("testdata", "monitoring.coreos.com_servicemonitors.yaml"),
				filepath.Join(repoRoot, "bin", "cert-manager", "crds"),
			},
			ErrorIfCRDPathMissing: true,
		}
		// Without KUBEBUILDER_ASSETS (a run from an IDE), use the binaries
		// that `make k8s-binaries` builds into bin/k8s.
		if os.Getenv("KUBEBUILDER_ASSETS") == "" {
			testEnv.BinaryAssetsDirectory = filepath.Join(repoRoot, "bin", "k8s")
		}
		cfg, err := testEnv.Start()
		if err != nil {
			envErr = err
			return
		}
		scheme := runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(scheme); err != nil {
			envErr = err
			return
		}
		if err := apiextensionsv1.AddToScheme(scheme); err != nil {
			envErr = err
			return
		}
		k8s, envErr = client.New(cfg, client.Options{Scheme: scheme})
	})
	if envErr != nil {
		t.Fatalf("starting the test API server: %v", envErr)
	}
	return k8s
}

// decodeManifests splits a multi-document YAML stream into objects, skipping
// empty documents (a template that rendered nothing).
func decodeManifests(t *testing.T, text string) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewBufferString(text), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("decoding manifests: %v", err)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
}

func describe(o *unstructured.Unstructured) string {
	if ns := o.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", o.GetKind(), ns, o.GetName())
	}
	return fmt.Sprintf("%s %s", o.GetKind(), o.GetName())
}

// createNamespaces really creates namespaces (a dry-run object in a namespace
// that does not exist is refused), ignoring those that exist.
func createNamespaces(t *testing.T, c client.Client, names ...string) {
	t.Helper()
	for _, name := range names {
		ns := &unstructured.Unstructured{}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		ns.SetName(name)
		if err := c.Create(t.Context(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating namespace %s: %v", name, err)
		}
	}
}

// applyDryRun sends every object to the API server as `kubectl apply
// --server-side --dry-run=server` would: admission, defaulting, schema and
// CEL validation all run, nothing is stored. Namespaces and CRDs are applied
// for real first, as Helm and kubectl order them, so that what follows them
// is validated against them.
func applyDryRun(t *testing.T, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := t.Context()
	var rest []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace":
			createNamespaces(t, c, o.GetName())
		case "CustomResourceDefinition":
			if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.ForceOwnership, client.FieldOwner(fieldOwner)); err != nil {
				t.Errorf("applying %s: %v", describe(o), err)
				continue
			}
			waitEstablished(t, c, o.GetName())
		default:
			rest = append(rest, o)
		}
	}
	for _, o := range rest {
		if err := dryRunOne(t, c, o); err != nil {
			t.Errorf("server-side dry-run of %s: %v", describe(o), err)
		}
	}
}

// dryRunOne server-side applies one object in dry-run mode.
func dryRunOne(t *testing.T, c client.Client, o *unstructured.Unstructured) error {
	t.Helper()
	return c.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.DryRunAll, client.ForceOwnership, client.FieldOwner(fieldOwner))
}

func waitEstablished(t *testing.T, c client.Client, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err == nil {
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("CRD %s was not established in time", name)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
