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
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// helmConfig is a Helm action configuration against the test API server, as
// an administrator, storing releases in Secrets as the helm CLI does.
func helmConfig(t *testing.T) *action.Configuration {
	t.Helper()
	apiServer(t)
	admin, err := testEnv.AddUser(envtest.User{Name: "helm-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &path
	ns := releaseNamespace
	flags.Namespace = &ns
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, releaseNamespace, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func crdKept(t *testing.T, c client.Client, name string) (exists, kept bool) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: name}, crd); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return false, false
		}
		t.Fatal(err)
	}
	return true, crd.Annotations["helm.sh/resource-policy"] == "keep"
}

// TestHelmInstallUpgradeUninstall installs the chart for real, over CRDs
// that exist already (adopted as the chart README says), upgrades it, and
// uninstalls it: upgrades change the CRDs, and with crds.keep the CRDs — and
// so every KairoLog resource — outlive the release.
func TestHelmInstallUpgradeUninstall(t *testing.T) {
	c := apiServer(t)
	createNamespaces(t, c, releaseNamespace)
	cfg := helmConfig(t)
	crds := mustRender(t, "").all("CustomResourceDefinition")

	// CRDs installed by other means, then adopted by the README's labels
	// and annotations.
	applyDryRun(t, c, crds)
	for _, o := range crds {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(t.Context(), client.ObjectKey{Name: o.GetName()}, crd); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(crd.DeepCopy())
		if crd.Labels == nil {
			crd.Labels = map[string]string{}
		}
		if crd.Annotations == nil {
			crd.Annotations = map[string]string{}
		}
		crd.Labels["app.kubernetes.io/managed-by"] = "Helm"
		crd.Annotations["meta.helm.sh/release-name"] = releaseName
		crd.Annotations["meta.helm.sh/release-namespace"] = releaseNamespace
		if err := c.Patch(t.Context(), crd, patch); err != nil {
			t.Fatal(err)
		}
	}

	install := action.NewInstall(cfg)
	install.ReleaseName = releaseName
	install.Namespace = releaseNamespace
	if _, err := install.Run(loadChart(t), nil); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	defer func() {
		uninstall := action.NewUninstall(cfg)
		if _, err := uninstall.Run(releaseName); err != nil {
			t.Fatalf("helm uninstall: %v", err)
		}
		for _, o := range crds {
			if exists, _ := crdKept(t, c, o.GetName()); !exists {
				t.Errorf("helm uninstall deleted CRD %s although crds.keep is on", o.GetName())
			}
		}
	}()
	for _, o := range crds {
		if _, kept := crdKept(t, c, o.GetName()); !kept {
			t.Errorf("CRD %s is not annotated to be kept after install", o.GetName())
		}
	}

	upgrade := func(values string) {
		t.Helper()
		vals, err := chartutil.ReadValues([]byte(values))
		if err != nil {
			t.Fatal(err)
		}
		u := action.NewUpgrade(cfg)
		u.Namespace = releaseNamespace
		if _, err := u.Run(releaseName, loadChart(t), vals.AsMap()); err != nil {
			t.Fatalf("helm upgrade with %q: %v", values, err)
		}
	}
	// An upgrade rewrites the CRDs: the annotation goes and comes back.
	upgrade("crds: {keep: false}\nwatchNamespaces: [" + releaseNamespace + "]")
	for _, o := range crds {
		if _, kept := crdKept(t, c, o.GetName()); kept {
			t.Errorf("helm upgrade did not update CRD %s", o.GetName())
		}
	}
	upgrade("crds: {keep: true}")
	for _, o := range crds {
		if _, kept := crdKept(t, c, o.GetName()); !kept {
			t.Errorf("helm upgrade did not update CRD %s", o.GetName())
		}
	}
}
