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
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// namespacedResource asks the API server's discovery whether a resource
// (subresources stripped) is namespaced.
func namespacedResource(t *testing.T, c client.Client, group, resource string) bool {
	t.Helper()
	base, _, _ := strings.Cut(resource, "/")
	gvk, err := c.RESTMapper().KindFor(schema.GroupVersionResource{Group: group, Resource: base})
	if err != nil {
		t.Fatalf("resource %q in group %q is unknown to the API server: %v", base, group, err)
	}
	m, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatal(err)
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace
}

// TestNamespacedRBACSplitsByScope: when the operator watches some namespaces,
// its Roles must hold every namespaced rule and its ClusterRole only rules on
// cluster-scoped resources — checked against a real API server's discovery,
// not against the generator's own table.
func TestNamespacedRBACSplitsByScope(t *testing.T) {
	c := apiServer(t)
	createNamespaces(t, c, releaseNamespace, "team-a")
	// The CRDs must exist for discovery to know kairolog.io.
	applyDryRun(t, c, mustRender(t, "").all("CustomResourceDefinition"))

	r := mustRender(t, "watchNamespaces: [team-a]")
	role := typed[rbacv1.Role](t, r.find("Role", "team-a", releaseName+"-manager"))
	cluster := typed[rbacv1.ClusterRole](t, r.find("ClusterRole", "", releaseName+"-manager"))
	for _, rule := range role.Rules {
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				if !namespacedResource(t, c, g, res) {
					t.Errorf("the per-namespace Role grants cluster-scoped %s in group %q, which a Role cannot grant", res, g)
				}
			}
		}
	}
	for _, rule := range cluster.Rules {
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				if namespacedResource(t, c, g, res) {
					t.Errorf("the ClusterRole grants namespaced %s in group %q although the operator watches only team-a", res, g)
				}
			}
		}
	}

	// Cluster-wide, the one ClusterRole holds both sets.
	all := typed[rbacv1.ClusterRole](t, mustRender(t, "").find("ClusterRole", "", releaseName+"-manager"))
	if got, want := len(all.Rules), len(role.Rules)+len(cluster.Rules); got != want {
		t.Errorf("the cluster-wide ClusterRole has %d rules, the namespaced Role and ClusterRole %d together", got, want)
	}
}

// TestAggregatedRolesCoverEveryKind: the ClusterRoles that extend admin,
// edit and view name every resource the chart's CRDs define.
func TestAggregatedRolesCoverEveryKind(t *testing.T) {
	r := mustRender(t, "")
	var plurals []string
	for _, o := range r.all("CustomResourceDefinition") {
		crd := typed[apiextensionsv1.CustomResourceDefinition](t, o)
		plurals = append(plurals, crd.Spec.Names.Plural)
	}
	for _, name := range []string{releaseName + "-edit", releaseName + "-view"} {
		o := r.find("ClusterRole", "", name)
		if o == nil {
			t.Fatalf("no ClusterRole %s", name)
		}
		role := typed[rbacv1.ClusterRole](t, o)
		for _, p := range plurals {
			granted := slices.ContainsFunc(role.Rules, func(rule rbacv1.PolicyRule) bool {
				return slices.Contains(rule.APIGroups, "kairolog.io") && slices.Contains(rule.Resources, p) && slices.Contains(rule.Verbs, "get")
			})
			if !granted {
				t.Errorf("%s does not grant %s", name, p)
			}
		}
	}
}
