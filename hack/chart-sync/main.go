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

// Command chart-sync writes the parts of the Helm chart that are derived from
// elsewhere. It copies what controller-gen generates into config/ — the CRDs
// and the manager's RBAC rules — into the chart, so that the chart and
// `kubectl apply -k config/default` install the same API and grant the same
// permissions, and it writes the values table of the chart's README from the
// "# --" comments of values.yaml. `make manifests` runs it after
// controller-gen; the test beside it fails when the chart differs from what
// it would write.
//
// The CRDs become templates (not files in the chart's crds/ directory) so that
// crds.install can leave them out, crds.keep can annotate them, and
// `helm upgrade` updates them. The RBAC rules become named templates that the
// chart's hand-written Role and ClusterRole templates include: cluster-wide
// or per watched namespace is the chart's decision, what the manager may do
// is the markers'.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// Paths relative to the repository root.
const (
	crdSourceDir     = "config/crd/bases"
	roleSource       = "config/rbac/role.yaml"
	leaderRoleSource = "config/rbac/leader_election_role.yaml"
	chartDir         = "charts/kairolog-operator"
	crdTemplateDir   = "templates/crds"
	rulesTemplate    = "templates/rbac/_rules.tpl"
)

func main() {
	root := flag.String("root", ".", "repository root")
	check := flag.Bool("check", false, "only report whether the chart is in sync; exit 1 when it is not")
	flag.Parse()

	want, err := Generate(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chart-sync:", err)
		os.Exit(1)
	}
	if *check {
		diffs, err := Diff(*root, want)
		if err != nil {
			fmt.Fprintln(os.Stderr, "chart-sync:", err)
			os.Exit(1)
		}
		for _, d := range diffs {
			fmt.Fprintln(os.Stderr, "chart-sync: out of date:", d)
		}
		if len(diffs) > 0 {
			fmt.Fprintln(os.Stderr, "chart-sync: run `make chart-sync`")
			os.Exit(1)
		}
		return
	}
	if err := Write(*root, want); err != nil {
		fmt.Fprintln(os.Stderr, "chart-sync:", err)
		os.Exit(1)
	}
}

// Generate returns every generated chart file, keyed by its path relative to
// the chart directory.
func Generate(root string) (map[string][]byte, error) {
	out := map[string][]byte{}
	crds, err := filepath.Glob(filepath.Join(root, crdSourceDir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("no CRDs in %s", crdSourceDir)
	}
	for _, path := range crds {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		name := filepath.Base(path)
		tpl, err := CRDTemplate(filepath.ToSlash(filepath.Join(crdSourceDir, name)), src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out[filepath.ToSlash(filepath.Join(crdTemplateDir, name))] = tpl
	}

	role, err := os.ReadFile(filepath.Join(root, roleSource))
	if err != nil {
		return nil, err
	}
	leader, err := os.ReadFile(filepath.Join(root, leaderRoleSource))
	if err != nil {
		return nil, err
	}
	rules, err := RulesTemplate(role, leader)
	if err != nil {
		return nil, err
	}
	out[rulesTemplate] = rules

	values, err := os.ReadFile(filepath.Join(root, chartDir, "values.yaml"))
	if err != nil {
		return nil, err
	}
	table, err := ValuesTable(values)
	if err != nil {
		return nil, err
	}
	readme, err := os.ReadFile(filepath.Join(root, chartDir, "README.md"))
	if err != nil {
		return nil, err
	}
	if out["README.md"], err = ReadmeWithValues(readme, table); err != nil {
		return nil, err
	}
	return out, nil
}

// Diff lists the generated files whose committed copy differs, is missing, or
// is a CRD template with no source any more.
func Diff(root string, want map[string][]byte) ([]string, error) {
	var diffs []string
	for rel, content := range want {
		have, err := os.ReadFile(filepath.Join(root, chartDir, rel))
		if errors.Is(err, os.ErrNotExist) {
			diffs = append(diffs, rel+" (missing)")
			continue
		}
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(have, content) {
			diffs = append(diffs, rel)
		}
	}
	stale, err := staleCRDTemplates(root, want)
	if err != nil {
		return nil, err
	}
	for _, rel := range stale {
		diffs = append(diffs, rel+" (no source in "+crdSourceDir+")")
	}
	sort.Strings(diffs)
	return diffs, nil
}

// Write writes the generated files and removes CRD templates whose CRD is gone.
func Write(root string, want map[string][]byte) error {
	stale, err := staleCRDTemplates(root, want)
	if err != nil {
		return err
	}
	for _, rel := range stale {
		if err := os.Remove(filepath.Join(root, chartDir, rel)); err != nil {
			return err
		}
	}
	for rel, content := range want {
		path := filepath.Join(root, chartDir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func staleCRDTemplates(root string, want map[string][]byte) ([]string, error) {
	have, err := filepath.Glob(filepath.Join(root, chartDir, crdTemplateDir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, path := range have {
		rel := filepath.ToSlash(filepath.Join(crdTemplateDir, filepath.Base(path)))
		if _, ok := want[rel]; !ok {
			stale = append(stale, rel)
		}
	}
	return stale, nil
}

// CRDTemplate turns one controller-gen CRD into a chart template: rendered
// only with crds.install, annotated to be kept on uninstall with crds.keep,
// and labelled like the rest of the release. The schema is copied byte for
// byte; only lines are added.
func CRDTemplate(source string, src []byte) ([]byte, error) {
	if bytes.Contains(src, []byte("{{")) || bytes.Contains(src, []byte("}}")) {
		return nil, errors.New("contains {{ or }}, which Helm would read as a template action")
	}
	lines := strings.Split(strings.TrimRight(string(src), "\n"), "\n")
	if len(lines) > 0 && lines[0] == "---" {
		lines = lines[1:]
	}
	for _, l := range lines {
		if l == "---" {
			return nil, errors.New("holds more than one document")
		}
	}

	meta := -1
	for i, l := range lines {
		if l == "metadata:" {
			meta = i
			break
		}
	}
	if meta < 0 {
		return nil, errors.New("no top-level metadata")
	}
	end := meta + 1
	for end < len(lines) && (strings.HasPrefix(lines[end], " ") || lines[end] == "") {
		end++
	}
	block := lines[meta+1 : end]
	block = appendToMapping(block, "annotations", []string{
		"    {{- if .Values.crds.keep }}",
		"    helm.sh/resource-policy: keep",
		"    {{- end }}",
	})
	block = appendToMapping(block, "labels", []string{
		`    {{- include "kairolog-operator.labels" . | nindent 4 }}`,
	})

	var b strings.Builder
	fmt.Fprintf(&b, "{{- /* Generated by `make chart-sync` from %s. DO NOT EDIT. */}}\n", source)
	b.WriteString("{{- if .Values.crds.install }}\n")
	for _, l := range lines[:meta+1] {
		b.WriteString(l + "\n")
	}
	for _, l := range block {
		b.WriteString(l + "\n")
	}
	for _, l := range lines[end:] {
		b.WriteString(l + "\n")
	}
	b.WriteString("{{- end }}\n")
	return []byte(b.String()), nil
}

// appendToMapping adds lines at the end of the two-space-indented mapping
// key within a metadata block, creating the key first when it is absent.
func appendToMapping(block []string, key string, add []string) []string {
	header := "  " + key + ":"
	for i, l := range block {
		if l != header {
			continue
		}
		j := i + 1
		for j < len(block) && strings.HasPrefix(block[j], "    ") {
			j++
		}
		out := append([]string{}, block[:j]...)
		out = append(out, add...)
		return append(out, block[j:]...)
	}
	out := append([]string{header}, add...)
	return append(out, block...)
}

// clusterScoped lists, per API group, the resources a manager might be
// granted that are not namespaced, so that a rule on them goes to the
// ClusterRole even when the operator watches only some namespaces. The chart
// test checks the split against a real API server's discovery.
var clusterScoped = map[string][]string{
	"":                             {"namespaces", "nodes", "persistentvolumes", "componentstatuses"},
	"storage.k8s.io":               {"storageclasses", "csidrivers", "csinodes", "volumeattachments", "volumeattributesclasses"},
	"rbac.authorization.k8s.io":    {"clusterroles", "clusterrolebindings"},
	"apiextensions.k8s.io":         {"customresourcedefinitions"},
	"admissionregistration.k8s.io": {"mutatingwebhookconfigurations", "validatingwebhookconfigurations", "validatingadmissionpolicies", "validatingadmissionpolicybindings"},
	"scheduling.k8s.io":            {"priorityclasses"},
	"node.k8s.io":                  {"runtimeclasses"},
	"certificates.k8s.io":          {"certificatesigningrequests"},
	"authentication.k8s.io":        {"tokenreviews", "selfsubjectreviews"},
	"authorization.k8s.io":         {"subjectaccessreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews"},
}

func isClusterScoped(group, resource string) bool {
	base, _, _ := strings.Cut(resource, "/")
	for _, r := range clusterScoped[group] {
		if r == base {
			return true
		}
	}
	return false
}

// SplitRules separates namespaced from cluster-scoped rules. A rule that
// names resources of both kinds, or groups of both kinds, is split into one
// rule per group.
func SplitRules(rules []rbacv1.PolicyRule) (namespaced, cluster []rbacv1.PolicyRule) {
	for _, rule := range rules {
		if len(rule.NonResourceURLs) > 0 {
			cluster = append(cluster, rule)
			continue
		}
		var ns, cl rbacv1.PolicyRule
		for _, group := range rule.APIGroups {
			var nsRes, clRes []string
			for _, res := range rule.Resources {
				if isClusterScoped(group, res) {
					clRes = append(clRes, res)
				} else {
					nsRes = append(nsRes, res)
				}
			}
			if len(nsRes) == len(rule.Resources) {
				ns.APIGroups = append(ns.APIGroups, group)
				continue
			}
			if len(clRes) == len(rule.Resources) {
				cl.APIGroups = append(cl.APIGroups, group)
				continue
			}
			namespaced = append(namespaced, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: nsRes, Verbs: rule.Verbs, ResourceNames: rule.ResourceNames})
			cluster = append(cluster, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: clRes, Verbs: rule.Verbs, ResourceNames: rule.ResourceNames})
		}
		if len(ns.APIGroups) > 0 {
			ns.Resources, ns.Verbs, ns.ResourceNames = rule.Resources, rule.Verbs, rule.ResourceNames
			namespaced = append(namespaced, ns)
		}
		if len(cl.APIGroups) > 0 {
			cl.Resources, cl.Verbs, cl.ResourceNames = rule.Resources, rule.Verbs, rule.ResourceNames
			cluster = append(cluster, cl)
		}
	}
	return namespaced, cluster
}

// RulesTemplate renders the manager's rules (from the ClusterRole
// controller-gen writes) and the leader-election rules as named templates.
func RulesTemplate(roleYAML, leaderYAML []byte) ([]byte, error) {
	var role, leader rbacv1.ClusterRole // a Role decodes the same way
	if err := yaml.UnmarshalStrict(bytes.TrimPrefix(roleYAML, []byte("---\n")), &role); err != nil {
		return nil, fmt.Errorf("%s: %w", roleSource, err)
	}
	if err := yaml.UnmarshalStrict(leaderYAML, &leader); err != nil {
		return nil, fmt.Errorf("%s: %w", leaderRoleSource, err)
	}
	if len(role.Rules) == 0 {
		return nil, fmt.Errorf("%s has no rules", roleSource)
	}
	namespaced, cluster := SplitRules(role.Rules)

	var b strings.Builder
	fmt.Fprintf(&b, "{{- /* Generated by `make chart-sync` from %s and %s. DO NOT EDIT. */}}\n\n", roleSource, leaderRoleSource)
	for _, d := range []struct {
		name, doc string
		rules     []rbacv1.PolicyRule
	}{
		{"kairolog-operator.namespacedRules", "The manager's rules on namespaced resources: in the ClusterRole, or in a Role per watched namespace.", namespaced},
		{"kairolog-operator.clusterScopedRules", "The manager's rules on cluster-scoped resources: always in a ClusterRole.", cluster},
		{"kairolog-operator.leaderElectionRules", "The rules of the leader-election Role in the release namespace.", leader.Rules},
	} {
		fmt.Fprintf(&b, "{{- /* %s */}}\n{{- define %q -}}\n", d.doc, d.name)
		if len(d.rules) > 0 {
			out, err := yaml.Marshal(d.rules)
			if err != nil {
				return nil, err
			}
			b.WriteString(strings.TrimRight(string(out), "\n") + "\n")
		}
		b.WriteString("{{- end }}\n\n")
	}
	return []byte(strings.TrimRight(b.String(), "\n") + "\n"), nil
}
