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
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var chartDir = filepath.Join(repoRoot, "charts", "kairolog-operator")

const (
	releaseName      = "kairolog-operator"
	releaseNamespace = "kairolog-system"
)

// rendered is one `helm template` of the chart.
type rendered struct {
	chart *chart.Chart
	objs  []*unstructured.Unstructured
	notes string
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	return c
}

// render renders the chart as `helm template --include-crds` does (an
// install in client-only dry-run mode), values.schema.json included.
func render(t *testing.T, valuesYAML string) (*rendered, error) {
	t.Helper()
	c := loadChart(t)
	vals, err := chartutil.ReadValues([]byte(valuesYAML))
	if err != nil {
		t.Fatalf("parsing test values: %v", err)
	}
	install := action.NewInstall(&action.Configuration{Log: t.Logf})
	install.ClientOnly = true
	install.DryRun = true
	install.Replace = true
	install.IncludeCRDs = true
	install.ReleaseName = releaseName
	install.Namespace = releaseNamespace
	rel, err := install.Run(c, vals.AsMap())
	if err != nil {
		return nil, err
	}
	return &rendered{chart: c, objs: decodeManifests(t, rel.Manifest), notes: rel.Info.Notes}, nil
}

func mustRender(t *testing.T, valuesYAML string) *rendered {
	t.Helper()
	r, err := render(t, valuesYAML)
	if err != nil {
		t.Fatalf("rendering the chart: %v", err)
	}
	return r
}

func (r *rendered) kinds() []string {
	var ks []string
	for _, o := range r.objs {
		ks = append(ks, o.GetKind())
	}
	slices.Sort(ks)
	return ks
}

func (r *rendered) all(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range r.objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

func (r *rendered) find(kind, namespace, name string) *unstructured.Unstructured {
	for _, o := range r.all(kind) {
		if o.GetNamespace() == namespace && o.GetName() == name {
			return o
		}
	}
	return nil
}

// typed converts a rendered object to its Go type; unknown fields fail, so a
// misspelt key in a template is caught here too, not only by the API server.
func typed[T any](t *testing.T, o *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, out, true); err != nil {
		t.Fatalf("%s: %v", describe(o), err)
	}
	return out
}

func (r *rendered) deployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	ds := r.all("Deployment")
	if len(ds) != 1 {
		t.Fatalf("want one Deployment, got %d", len(ds))
	}
	return typed[appsv1.Deployment](t, ds[0])
}

func manager(t *testing.T, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "manager" {
			return c
		}
	}
	t.Fatal("the Deployment has no manager container")
	return corev1.Container{}
}

func hasArg(c corev1.Container, arg string) bool { return slices.Contains(c.Args, arg) }

func argWithPrefix(c corev1.Container, prefix string) (string, bool) {
	for _, a := range c.Args {
		if strings.HasPrefix(a, prefix) {
			return strings.TrimPrefix(a, prefix), true
		}
	}
	return "", false
}

func wantArgs(t *testing.T, c corev1.Container, args ...string) {
	t.Helper()
	for _, a := range args {
		if !hasArg(c, a) {
			t.Errorf("manager args %q lack %q", c.Args, a)
		}
	}
}

func wantKinds(t *testing.T, r *rendered, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := r.kinds(); !slices.Equal(got, want) {
		t.Errorf("rendered kinds\n got %q\nwant %q", got, want)
	}
}

// chartCase is one set of values, what it must render, and the namespaces
// that must exist before it is installed.
type chartCase struct {
	name       string
	values     string
	namespaces []string
	check      func(t *testing.T, r *rendered)
}

var chartCases = []chartCase{
	{
		name: "defaults",
		check: func(t *testing.T, r *rendered) {
			wantKinds(t, r,
				"CustomResourceDefinition", "CustomResourceDefinition", "CustomResourceDefinition", "CustomResourceDefinition",
				"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
				"ClusterRole", "ClusterRole", "Deployment")
			app := r.chart.Metadata.AppVersion
			d := r.deployment(t)
			m := manager(t, d)
			if want := "kairolog/operator:" + app; m.Image != want {
				t.Errorf("manager image %q, want %q", m.Image, want)
			}
			wantArgs(t, m,
				"--leader-elect",
				"--leader-election-namespace="+releaseNamespace,
				"--health-probe-bind-address=:8081",
				"--metrics-bind-address=:8080",
				"--default-broker-image=kairolog/broker:"+app,
				"--resync-interval=30s",
				"--broker-timeout=10s",
				"--zap-log-level=info",
				"--zap-encoder=json")
			if _, ok := argWithPrefix(m, "--watch-namespaces"); ok {
				t.Error("--watch-namespaces is set although watchNamespaces is empty")
			}
			wantRestrictedSecurity(t, d)
			sa := typed[corev1.ServiceAccount](t, r.all("ServiceAccount")[0])
			if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken ||
				d.Spec.Template.Spec.AutomountServiceAccountToken == nil || !*d.Spec.Template.Spec.AutomountServiceAccountToken {
				t.Error("only the manager pod should mount the ServiceAccount's token")
			}
			for _, crd := range r.all("CustomResourceDefinition") {
				if got := crd.GetAnnotations()["helm.sh/resource-policy"]; got != "keep" {
					t.Errorf("%s: helm.sh/resource-policy %q, want keep", describe(crd), got)
				}
			}
			for _, want := range []string{"kind: KairoCluster", "kind: Topic", "kind: ConsumerGroup", "watching every namespace", "rollout status deployment/kairolog-operator",
				"kubectl port-forward svc/kairo 9095:9095", "kcat -b localhost:9095 -L"} {
				if !strings.Contains(r.notes, want) {
					t.Errorf("NOTES.txt lacks %q:\n%s", want, r.notes)
				}
			}
		},
	},
	{
		name: "local images with the demo's tags",
		values: `
image: {tag: dev, pullPolicy: Never}
brokerImage: {tag: dev}
`,
		check: func(t *testing.T, r *rendered) {
			m := manager(t, r.deployment(t))
			if m.Image != "kairolog/operator:dev" || m.ImagePullPolicy != corev1.PullNever {
				t.Errorf("manager image %q pull policy %q, want kairolog/operator:dev and Never", m.Image, m.ImagePullPolicy)
			}
			wantArgs(t, m, "--default-broker-image=kairolog/broker:dev")
		},
	},
	{
		name: "images by digest from a private registry",
		values: `
image:
  repository: registry.example.com:5000/kairolog/operator
  digest: sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
brokerImage:
  repository: registry.example.com:5000/kairolog/broker
  tag: "1.2.3"
imagePullSecrets: [{name: regcred}]
`,
		check: func(t *testing.T, r *rendered) {
			d := r.deployment(t)
			m := manager(t, d)
			if want := "registry.example.com:5000/kairolog/operator@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"; m.Image != want {
				t.Errorf("manager image %q, want %q", m.Image, want)
			}
			wantArgs(t, m, "--default-broker-image=registry.example.com:5000/kairolog/broker:1.2.3")
			if ps := d.Spec.Template.Spec.ImagePullSecrets; len(ps) != 1 || ps[0].Name != "regcred" {
				t.Errorf("imagePullSecrets %v", ps)
			}
		},
	},
	{
		name:       "watching two namespaces",
		values:     `watchNamespaces: [team-a, team-b]`,
		namespaces: []string{"team-a", "team-b"},
		check: func(t *testing.T, r *rendered) {
			m := manager(t, r.deployment(t))
			wantArgs(t, m, "--watch-namespaces=team-a,team-b")
			for _, ns := range []string{"team-a", "team-b"} {
				role := r.find("Role", ns, releaseName+"-manager")
				if role == nil {
					t.Errorf("no manager Role in %s", ns)
					continue
				}
				if r.find("RoleBinding", ns, releaseName+"-manager") == nil {
					t.Errorf("no manager RoleBinding in %s", ns)
				}
			}
			cr := r.find("ClusterRole", "", releaseName+"-manager")
			if cr == nil {
				t.Fatal("no ClusterRole for the cluster-scoped rules")
			}
			for _, rule := range typed[rbacv1.ClusterRole](t, cr).Rules {
				for _, g := range rule.APIGroups {
					if g == "kairolog.io" || g == "apps" {
						t.Errorf("the ClusterRole grants %s %v cluster-wide while watching two namespaces", g, rule.Resources)
					}
				}
			}
			if !strings.Contains(r.notes, "watching namespaces team-a, team-b") {
				t.Errorf("NOTES.txt does not name the watched namespaces:\n%s", r.notes)
			}
		},
	},
	{
		name: "CRDs left out",
		values: `
crds: {install: false}
`,
		check: func(t *testing.T, r *rendered) {
			if n := len(r.all("CustomResourceDefinition")); n != 0 {
				t.Errorf("%d CRDs rendered with crds.install=false", n)
			}
			if !strings.Contains(r.notes, "CRDs were not installed") {
				t.Errorf("NOTES.txt does not say the CRDs are missing:\n%s", r.notes)
			}
		},
	},
	{
		name:   "CRDs not kept",
		values: `crds: {keep: false}`,
		check: func(t *testing.T, r *rendered) {
			crds := r.all("CustomResourceDefinition")
			if len(crds) != 4 {
				t.Fatalf("%d CRDs, want 4", len(crds))
			}
			for _, crd := range crds {
				if _, ok := crd.GetAnnotations()["helm.sh/resource-policy"]; ok {
					t.Errorf("%s is kept with crds.keep=false", describe(crd))
				}
			}
		},
	},
	{
		name:   "metrics off",
		values: `metrics: {enabled: false}`,
		check: func(t *testing.T, r *rendered) {
			m := manager(t, r.deployment(t))
			wantArgs(t, m, "--metrics-bind-address=0")
			for _, p := range m.Ports {
				if p.Name == "metrics" {
					t.Error("the metrics port is declared with metrics off")
				}
			}
		},
	},
	{
		name: "metrics Service and ServiceMonitor",
		values: `
metrics:
  port: 9090
  service: {enabled: true, port: 8443, annotations: {team: streaming}}
  serviceMonitor:
    enabled: true
    interval: 15s
    scrapeTimeout: 10s
    labels: {release: prometheus}
    relabelings:
    - action: replace
      targetLabel: cluster
      replacement: prod
`,
		check: func(t *testing.T, r *rendered) {
			d := r.deployment(t)
			m := manager(t, d)
			wantArgs(t, m, "--metrics-bind-address=:9090")
			svcs := r.all("Service")
			if len(svcs) != 1 {
				t.Fatalf("want one metrics Service, got %d", len(svcs))
			}
			svc := typed[corev1.Service](t, svcs[0])
			if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
				t.Errorf("the metrics Service selector %v does not select the manager pods %v", svc.Spec.Selector, d.Spec.Template.Labels)
			}
			if tp := svc.Spec.Ports[0].TargetPort.String(); !slices.ContainsFunc(m.Ports, func(p corev1.ContainerPort) bool { return p.Name == tp }) {
				t.Errorf("the metrics Service targets port %q, which the manager does not declare", tp)
			}
			sms := r.all("ServiceMonitor")
			if len(sms) != 1 {
				t.Fatalf("want one ServiceMonitor, got %d", len(sms))
			}
			sm := sms[0]
			sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
			if !labels.SelectorFromSet(sel).Matches(labels.Set(svc.Labels)) {
				t.Errorf("the ServiceMonitor selector %v does not select the metrics Service %v", sel, svc.Labels)
			}
			eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			if port := eps[0].(map[string]any)["port"]; port != svc.Spec.Ports[0].Name {
				t.Errorf("the ServiceMonitor scrapes port %v, the Service names its port %q", port, svc.Spec.Ports[0].Name)
			}
			if sm.GetLabels()["release"] != "prometheus" {
				t.Errorf("ServiceMonitor labels %v lack release=prometheus", sm.GetLabels())
			}
		},
	},
	{
		name: "an existing ServiceAccount and no RBAC",
		values: `
serviceAccount: {create: false, name: platform-operators}
rbac: {create: false}
`,
		check: func(t *testing.T, r *rendered) {
			wantKinds(t, r, "CustomResourceDefinition", "CustomResourceDefinition", "CustomResourceDefinition", "CustomResourceDefinition", "Deployment")
			if sa := r.deployment(t).Spec.Template.Spec.ServiceAccountName; sa != "platform-operators" {
				t.Errorf("serviceAccountName %q, want platform-operators", sa)
			}
		},
	},
	{
		name: "placement, resources and tuning",
		values: `
fullnameOverride: kairo-operator
replicaCount: 2
resyncInterval: 1m30s
brokerTimeout: 10s
logLevel: 3
logFormat: console
extraArgs: [--zap-stacktrace-level=panic]
extraEnv:
- name: GOMEMLIMIT
  value: 200MiB
podAnnotations: {example.com/owner: streaming}
podLabels: {team: streaming}
nodeSelector: {kubernetes.io/os: linux}
tolerations:
- key: dedicated
  operator: Equal
  value: operators
  effect: NoSchedule
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels: {app.kubernetes.io/name: kairolog-operator}
topologySpreadConstraints:
- maxSkew: 1
  topologyKey: topology.kubernetes.io/zone
  whenUnsatisfiable: ScheduleAnyway
  labelSelector:
    matchLabels: {app.kubernetes.io/name: kairolog-operator}
priorityClassName: system-cluster-critical
terminationGracePeriodSeconds: 30
resources:
  requests: {cpu: 50m, memory: 128Mi}
  limits: {cpu: null, memory: 512Mi} # null drops the default CPU limit
`,
		check: func(t *testing.T, r *rendered) {
			d := r.deployment(t)
			if d.Name != "kairo-operator" || *d.Spec.Replicas != 2 {
				t.Errorf("Deployment %s with %d replicas, want kairo-operator with 2", d.Name, *d.Spec.Replicas)
			}
			m := manager(t, d)
			wantArgs(t, m, "--resync-interval=1m30s", "--broker-timeout=10s", "--zap-log-level=3", "--zap-encoder=console", "--zap-stacktrace-level=panic", "--leader-elect")
			ps := d.Spec.Template.Spec
			if ps.NodeSelector["kubernetes.io/os"] != "linux" || len(ps.Tolerations) != 1 || ps.Affinity == nil ||
				len(ps.TopologySpreadConstraints) != 1 || ps.PriorityClassName != "system-cluster-critical" ||
				*ps.TerminationGracePeriodSeconds != 30 {
				t.Errorf("placement not rendered: %+v", ps)
			}
			if d.Spec.Template.Labels["team"] != "streaming" || d.Spec.Template.Annotations["example.com/owner"] != "streaming" {
				t.Errorf("pod labels %v annotations %v", d.Spec.Template.Labels, d.Spec.Template.Annotations)
			}
			if m.Resources.Limits.Memory().String() != "512Mi" || !m.Resources.Limits.Cpu().IsZero() {
				t.Errorf("resources %+v", m.Resources)
			}
			if !slices.ContainsFunc(m.Env, func(e corev1.EnvVar) bool { return e.Name == "GOMEMLIMIT" }) {
				t.Errorf("env %v lacks GOMEMLIMIT", m.Env)
			}
		},
	},
}

func wantRestrictedSecurity(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	pod := d.Spec.Template.Spec.SecurityContext
	if pod == nil || pod.RunAsNonRoot == nil || !*pod.RunAsNonRoot || pod.SeccompProfile == nil || pod.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context %+v is not the restricted profile", pod)
	}
	m := manager(t, d)
	c := m.SecurityContext
	if c == nil || c.AllowPrivilegeEscalation == nil || *c.AllowPrivilegeEscalation ||
		c.ReadOnlyRootFilesystem == nil || !*c.ReadOnlyRootFilesystem ||
		c.Capabilities == nil || !slices.Equal(c.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container security context %+v is not the restricted profile", c)
	}
	if m.LivenessProbe == nil || m.LivenessProbe.HTTPGet.Path != "/healthz" || m.ReadinessProbe == nil || m.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Error("the manager lacks /healthz and /readyz probes")
	}
}

// wantConsistent checks what holds for every values: labels, namespaces, and
// that references between the rendered objects resolve.
func wantConsistent(t *testing.T, r *rendered) {
	t.Helper()
	d := r.deployment(t)
	sa := d.Spec.Template.Spec.ServiceAccountName
	for _, o := range r.objs {
		l := o.GetLabels()
		if l["app.kubernetes.io/managed-by"] != "Helm" || l["app.kubernetes.io/instance"] != releaseName || l["app.kubernetes.io/part-of"] != "kairolog" {
			t.Errorf("%s lacks the release labels: %v", describe(o), l)
		}
		switch o.GetKind() {
		case "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding":
		case "Role", "RoleBinding":
			if o.GetNamespace() == "" {
				t.Errorf("%s has no namespace", describe(o))
			}
		default:
			// Explicit namespaces keep `helm template | kubectl apply -f -` in the release namespace.
			if o.GetNamespace() != releaseNamespace {
				t.Errorf("%s is not in the release namespace %s", describe(o), releaseNamespace)
			}
		}
	}
	if sas := r.all("ServiceAccount"); len(sas) == 1 && sas[0].GetName() != sa {
		t.Errorf("the Deployment runs as %q but the chart creates ServiceAccount %q", sa, sas[0].GetName())
	}
	for _, kind := range []string{"RoleBinding", "ClusterRoleBinding"} {
		for _, o := range r.all(kind) {
			b := typed[rbacv1.RoleBinding](t, o)
			if r.find(b.RoleRef.Kind, map[string]string{"Role": o.GetNamespace()}[b.RoleRef.Kind], b.RoleRef.Name) == nil {
				t.Errorf("%s binds %s %s, which the chart does not render", describe(o), b.RoleRef.Kind, b.RoleRef.Name)
			}
			if len(b.Subjects) != 1 || b.Subjects[0].Kind != "ServiceAccount" || b.Subjects[0].Name != sa || b.Subjects[0].Namespace != releaseNamespace {
				t.Errorf("%s binds %+v, want the manager's ServiceAccount %s/%s", describe(o), b.Subjects, releaseNamespace, sa)
			}
		}
	}
	wantRestrictedSecurity(t, d)
}

// TestChartRendersValidManifests renders the chart for default and
// non-default values and applies each rendering with server-side dry-run to
// a real API server, the chart's CRDs created first.
func TestChartRendersValidManifests(t *testing.T) {
	c := apiServer(t)
	createNamespaces(t, c, releaseNamespace)
	for _, tc := range chartCases {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRender(t, tc.values)
			tc.check(t, r)
			wantConsistent(t, r)
			createNamespaces(t, c, tc.namespaces...)
			applyDryRun(t, c, r.objs)
			if err := dryRunRestrictedPod(t, c, r.deployment(t)); err != nil {
				t.Errorf("the manager pod breaks the restricted Pod Security Standard: %v", err)
			}
		})
	}
}

// restrictedNamespace enforces the restricted Pod Security Standard.
const restrictedNamespace = "restricted"

// dryRunRestrictedPod creates, in dry-run, a pod from the Deployment's
// template in a namespace that enforces the restricted Pod Security
// Standard: Pod Security admission judges pods, not Deployments.
func dryRunRestrictedPod(t *testing.T, c client.Client, d *appsv1.Deployment) error {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: restrictedNamespace, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}}
	if err := c.Create(t.Context(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: restrictedNamespace, Labels: d.Spec.Template.Labels},
		Spec:       *d.Spec.Template.Spec.DeepCopy(),
	}
	// The ServiceAccount and priority class exist in the release's namespace
	// and cluster, not in this test namespace.
	pod.Spec.ServiceAccountName = ""
	pod.Spec.PriorityClassName = ""
	return c.Create(t.Context(), pod, client.DryRunAll)
}

// TestRestrictedNamespaceRefusesPrivilegedPods proves that the restricted
// check above can fail.
func TestRestrictedNamespaceRefusesPrivilegedPods(t *testing.T) {
	c := apiServer(t)
	d := mustRender(t, "").deployment(t)
	d.Spec.Template.Spec.SecurityContext = nil
	d.Spec.Template.Spec.Containers[0].SecurityContext = nil
	err := dryRunRestrictedPod(t, c, d)
	if err == nil || !strings.Contains(err.Error(), "restricted") {
		t.Fatalf("a pod without a security context was admitted to a restricted namespace: %v", err)
	}
}

// TestChartRejectsBadValues: values.schema.json and the chart's own checks
// fail `helm install` for values that would otherwise install something
// broken or be silently ignored.
func TestChartRejectsBadValues(t *testing.T) {
	for _, tc := range []struct{ values, want string }{
		{`replicaCount: -1`, "replicaCount"},
		{`replicaCount: "2"`, "replicaCount"},
		{`logLevel: loud`, "logLevel"},
		{`logLevel: 0`, "logLevel"},
		{`logFormat: xml`, "logFormat"},
		{`image: kairolog/operator:dev`, "image"},
		{`image: {repository: kairolog/operator, tags: dev}`, "tags"},
		{`image: {repository: "kairolog/operator:dev"}`, "repository"},
		{`image: {pullPolicy: Sometimes}`, "pullPolicy"},
		{`brokerImage: {pullPolicy: Always}`, "pullPolicy"},
		{`brokerImage: {repository: ""}`, "repository"},
		{`watchNamespaces: "team-a,team-b"`, "watchNamespaces"},
		{`watchNamespaces: [Team_A]`, "watchNamespaces"},
		{`watchNamespaces: [team-a, team-a]`, "watchNamespaces"},
		{`resyncInterval: 5 minutes`, "resyncInterval"},
		{`resyncInterval: ""`, "resyncInterval"},
		{`brokerTimeout: 10`, "brokerTimeout"},
		{`brokerTimeout: ""`, "brokerTimeout"},
		{`metrics: {port: 70000}`, "port"},
		{`crds: {keep: "yes"}`, "keep"},
		{`crds: {enabled: true}`, "enabled"},
		{`unknownKey: 1`, "unknownKey"},
		{`nodeSelector: {disk: 1}`, "nodeSelector"},
		{`extraArgs: [leader-elect]`, "extraArgs"},
		{`serviceAccount: {create: false}`, "serviceAccount.name is required"},
		{`metrics: {enabled: false, serviceMonitor: {enabled: true}}`, "needs metrics.enabled"},
		{`metrics: {enabled: false, service: {enabled: true}}`, "needs metrics.enabled"},
		{`{replicaCount: 2, leaderElection: {enabled: false}}`, "needs leaderElection.enabled"},
		{`healthPort: 8080`, "must differ"},
	} {
		t.Run(tc.values, func(t *testing.T) {
			_, err := render(t, tc.values)
			if err == nil {
				t.Fatalf("values %q rendered; want an error about %q", tc.values, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("values %q: error %q does not mention %q", tc.values, err, tc.want)
			}
		})
	}
}

// TestChartLint runs `helm lint --strict` for default and non-default values.
func TestChartLint(t *testing.T) {
	for _, tc := range chartCases {
		t.Run(tc.name, func(t *testing.T) {
			vals, err := chartutil.ReadValues([]byte(tc.values))
			if err != nil {
				t.Fatal(err)
			}
			lint := action.NewLint()
			lint.Strict = true
			lint.Namespace = releaseNamespace
			res := lint.Run([]string{chartDir}, vals.AsMap())
			for _, msg := range res.Messages {
				// Info is advice such as "icon is recommended".
				if msg.Severity > support.InfoSev {
					t.Errorf("helm lint: %s", msg)
				}
			}
			for _, err := range res.Errors {
				t.Errorf("helm lint: %v", err)
			}
		})
	}
}

// TestDryRunRejectsInvalidObjects proves the harness: an object the API
// server would refuse fails the dry-run, so a pass means something.
func TestDryRunRejectsInvalidObjects(t *testing.T) {
	c := apiServer(t)
	createNamespaces(t, c, releaseNamespace)
	for _, tc := range []struct {
		field string
		value any
	}{
		{"misspelt", true},                    // unknown field
		{"imagePullPolicy", "Sometimes"},      // not an allowed value
		{"terminationMessagePolicy", "Never"}, // not an allowed value
	} {
		t.Run(tc.field, func(t *testing.T) {
			d := mustRender(t, "").all("Deployment")[0].DeepCopy()
			containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
			containers[0].(map[string]any)[tc.field] = tc.value
			if err := unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers"); err != nil {
				t.Fatal(err)
			}
			err := dryRunOne(t, c, d)
			if err == nil {
				t.Fatalf("a Deployment with %s: %v passed the dry-run", tc.field, tc.value)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("dry-run error %q does not mention %q", err, tc.field)
			}
		})
	}
}
