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
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomize renders a kustomization directory as `kubectl kustomize` does,
// with the same kustomize library kubectl embeds, pinned in go.mod.
func kustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return decodeManifests(t, string(out))
}

// TestKustomizeDefaultIsValid applies `kubectl kustomize config/default` with
// server-side dry-run (its Namespace and CRDs for real), then the samples of
// config/samples against those CRDs.
func TestKustomizeDefaultIsValid(t *testing.T) {
	c := apiServer(t)
	objs := kustomize(t, filepath.Join(repoRoot, "config", "default"))
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	for _, kind := range []string{"Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment"} {
		if kinds[kind] == 0 {
			t.Errorf("config/default renders no %s", kind)
		}
	}
	applyDryRun(t, c, objs)

	t.Run("samples", func(t *testing.T) {
		samples := kustomize(t, filepath.Join(repoRoot, "config", "samples"))
		if len(samples) == 0 {
			t.Fatal("config/samples renders nothing")
		}
		createNamespaces(t, c, "samples")
		for _, o := range samples {
			o.SetNamespace("samples")
		}
		applyDryRun(t, c, samples)
	})
}
