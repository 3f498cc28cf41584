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

package resources

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

func brokerContainer(t *testing.T, sts *appsv1.StatefulSet) corev1.Container {
	t.Helper()
	if n := len(sts.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("%d containers", n)
	}
	return sts.Spec.Template.Spec.Containers[0]
}

func TestStatefulSetShape(t *testing.T) {
	c := testCluster()
	c.Spec.Storage.StorageClassName = ptr.To("fast")
	sts := statefulSet(t, testBuilder(t, c))
	checkOwnedAndLabelled(t, sts)

	if sts.Name != "kairo" || sts.Spec.ServiceName != "kairo-headless" {
		t.Errorf("name %q serviceName %q", sts.Name, sts.Spec.ServiceName)
	}
	if *sts.Spec.Replicas != 3 || sts.Annotations[VotersAnnotation] != "3" || sts.Annotations[DefaultReplicationAnnotation] != "3" {
		t.Errorf("replicas %d annotations %v", *sts.Spec.Replicas, sts.Annotations)
	}
	if sts.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType || sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		t.Errorf("strategy %v, pod management %v", sts.Spec.UpdateStrategy, sts.Spec.PodManagementPolicy)
	}
	if !reflect.DeepEqual(sts.Spec.Selector.MatchLabels, SelectorLabels(c)) {
		t.Errorf("selector %v", sts.Spec.Selector)
	}
	for k, v := range sts.Spec.Selector.MatchLabels {
		if sts.Spec.Template.Labels[k] != v {
			t.Errorf("pod template label %s missing: the selector would not match", k)
		}
	}
	if sts.Spec.Template.Labels[LabelManagedBy] != ManagedBy {
		t.Errorf("pods lack %s; the operator caches only labelled pods", LabelManagedBy)
	}

	// Volume claims come from spec.storage.
	if len(sts.Spec.VolumeClaimTemplates) != 1 {
		t.Fatalf("claim templates %+v", sts.Spec.VolumeClaimTemplates)
	}
	vct := sts.Spec.VolumeClaimTemplates[0]
	size := vct.Spec.Resources.Requests[corev1.ResourceStorage]
	if vct.Name != "data" || size.String() != "10Gi" || ptr.Deref(vct.Spec.StorageClassName, "") != "fast" ||
		!slices.Equal(vct.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) ||
		vct.Labels[LabelManagedBy] != ManagedBy {
		t.Errorf("claim template %+v", vct)
	}
	ret := sts.Spec.PersistentVolumeClaimRetentionPolicy
	if ret == nil || ret.WhenDeleted != appsv1.RetainPersistentVolumeClaimRetentionPolicyType ||
		ret.WhenScaled != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
		t.Errorf("default retention %+v, want Retain/Retain", ret)
	}

	ctr := brokerContainer(t, sts)
	if ctr.Name != "broker" || ctr.Image != "kairolog/broker:1.0" || len(ctr.Command) != 0 {
		t.Errorf("container %q image %q command %v (the image's entrypoint is the broker)", ctr.Name, ctr.Image, ctr.Command)
	}
	wantArgs := []string{
		"--data-dir=/var/lib/kairolog/data",
		"--config-file=/etc/kairolog/broker.properties",
		"--listen=:8080",
		"--raft-listen=:9093",
		"--peer-listen=:9094",
		"--kafka-listen=:9092",
		"--kafka-gateway-listen=:9095",
		"--advertised-address=$(POD_NAME).kairo-headless.$(POD_NAMESPACE).svc:8080",
		"--peer-advertised-address=$(POD_NAME).kairo-headless.$(POD_NAMESPACE).svc:9094",
		"--kafka-advertised-address=$(POD_NAME).kairo-headless.$(POD_NAMESPACE).svc:9092",
		"--kafka-gateway-advertised-address=localhost:9095",
		"--peer-secret-file=/etc/kairolog-peer/secret",
		"--initial-voters=0@kairo-0.kairo-headless.data.svc:9093,1@kairo-1.kairo-headless.data.svc:9093,2@kairo-2.kairo-headless.data.svc:9093",
	}
	if !slices.Equal(ctr.Args, wantArgs) {
		t.Errorf("args\n%s\nwant\n%s", strings.Join(ctr.Args, "\n"), strings.Join(wantArgs, "\n"))
	}
	for _, a := range ctr.Args {
		if strings.HasPrefix(a, "--id") {
			t.Errorf("%s: the broker id comes from the pod's hostname ordinal", a)
		}
	}
	env := map[string]string{}
	for _, e := range ctr.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if env["POD_NAME"] != "metadata.name" || env["POD_NAMESPACE"] != "metadata.namespace" {
		t.Errorf("downward API env %v", env)
	}
	ports := map[string]int32{}
	for _, p := range ctr.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if !reflect.DeepEqual(ports, map[string]int32{"http": 8080, "raft": 9093, "peer": 9094, "kafka": 9092, "kafka-gateway": 9095}) {
		t.Errorf("ports %v", ports)
	}
	if ctr.LivenessProbe == nil || ctr.LivenessProbe.HTTPGet.Path != "/health" || ctr.LivenessProbe.HTTPGet.Port.StrVal != "http" {
		t.Errorf("liveness probe %+v", ctr.LivenessProbe)
	}
	if ctr.ReadinessProbe == nil || ctr.ReadinessProbe.HTTPGet.Path != "/ready" {
		t.Errorf("readiness probe %+v", ctr.ReadinessProbe)
	}
	if ctr.StartupProbe == nil || ctr.StartupProbe.HTTPGet.Path != "/health" ||
		ctr.StartupProbe.PeriodSeconds*ctr.StartupProbe.FailureThreshold < 300 {
		t.Errorf("startup probe %+v must allow minutes of log recovery", ctr.StartupProbe)
	}
}

func TestStatefulSetSecurity(t *testing.T) {
	sts := statefulSet(t, testBuilder(t, testCluster()))
	pod := sts.Spec.Template.Spec
	if pod.SecurityContext == nil || !ptr.Deref(pod.SecurityContext.RunAsNonRoot, false) ||
		ptr.Deref(pod.SecurityContext.RunAsUser, 0) == 0 || ptr.Deref(pod.SecurityContext.FSGroup, 0) == 0 {
		t.Errorf("pod security context %+v: want non-root with an fsGroup that can write the volume", pod.SecurityContext)
	}
	if ptr.Deref(pod.AutomountServiceAccountToken, true) {
		t.Error("brokers get a service account token they never use")
	}
	ctr := brokerContainer(t, sts)
	sc := ctr.SecurityContext
	if sc == nil || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) || ptr.Deref(sc.AllowPrivilegeEscalation, true) ||
		!ptr.Deref(sc.RunAsNonRoot, false) || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container security context %+v", sc)
	}
	// With a read-only root filesystem, the data volume and /tmp are the
	// writable places; the ConfigMap is read-only.
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range ctr.VolumeMounts {
		mounts[m.Name] = m
	}
	if m := mounts["data"]; m.MountPath != "/var/lib/kairolog" || m.ReadOnly {
		t.Errorf("data mount %+v", m)
	}
	if m := mounts["tmp"]; m.MountPath != "/tmp" || m.ReadOnly {
		t.Errorf("tmp mount %+v", m)
	}
	if m := mounts["config"]; m.MountPath != "/etc/kairolog" || !m.ReadOnly {
		t.Errorf("config mount %+v", m)
	}
	if m := mounts["peer-secret"]; m.MountPath != "/etc/kairolog-peer" || !m.ReadOnly {
		t.Errorf("peer secret mount %+v", m)
	}
	// A mount point inside another volume's mount would have to be made
	// in that volume, which a read-only ConfigMap or Secret refuses: the
	// container could not start.
	for _, a := range ctr.VolumeMounts {
		for _, b := range ctr.VolumeMounts {
			if a.Name != b.Name && strings.HasPrefix(a.MountPath, strings.TrimSuffix(b.MountPath, "/")+"/") {
				t.Errorf("mount %s (%s) is inside mount %s (%s)", a.Name, a.MountPath, b.Name, b.MountPath)
			}
		}
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	if v := vols["config"]; v.ConfigMap == nil || v.ConfigMap.Name != "kairo-config" {
		t.Errorf("config volume %+v", v)
	}
	if v := vols["peer-secret"]; v.Secret == nil || v.Secret.SecretName != "kairo-peer-secret" ||
		len(v.Secret.Items) != 1 || v.Secret.Items[0].Key != "secret" || ptr.Deref(v.Secret.DefaultMode, 0)&0o022 != 0 {
		t.Errorf("peer secret volume %+v", v)
	}
	if _, ok := vols["data"]; ok {
		t.Error("the data volume must come from the claim template, not a pod volume")
	}
	if g := ptr.Deref(pod.TerminationGracePeriodSeconds, 0); g < 45 {
		t.Errorf("termination grace %ds is shorter than a clean shutdown", g)
	}
}

func TestStatefulSetVoters(t *testing.T) {
	for _, tc := range []struct {
		replicas, voters int32
		want             string
	}{
		{1, 1, "--initial-voters=0@kairo-0.kairo-headless.data.svc:9093"},
		{2, 1, "--initial-voters=0@kairo-0.kairo-headless.data.svc:9093"},
		{5, 3, "--initial-voters=0@kairo-0.kairo-headless.data.svc:9093,1@kairo-1.kairo-headless.data.svc:9093,2@kairo-2.kairo-headless.data.svc:9093"},
	} {
		if v := Voters(tc.replicas); v != tc.voters {
			t.Errorf("Voters(%d) = %d, want %d", tc.replicas, v, tc.voters)
		}
		c := testCluster()
		c.Spec.Replicas = tc.replicas
		args := brokerContainer(t, statefulSet(t, testBuilder(t, c))).Args
		if !slices.Contains(args, tc.want) {
			t.Errorf("replicas %d: args %v lack %s", tc.replicas, args, tc.want)
		}
	}

	// Scaling keeps the voters fixed at creation, and so the template.
	c := testCluster()
	b := testBuilder(t, c)
	before := statefulSet(t, b)
	b.Replicas, c.Spec.Replicas = 5, 5
	after := statefulSet(t, b)
	if *after.Spec.Replicas != 5 || !reflect.DeepEqual(before.Spec.Template, after.Spec.Template) {
		t.Error("scaling from 3 to 5 brokers changed the pod template")
	}
}

func TestStatefulSetOverrides(t *testing.T) {
	c := testCluster()
	c.Spec.Image = "registry.example.com/kairolog/broker:2.0"
	c.Spec.ImagePullPolicy = corev1.PullAlways
	c.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	c.Spec.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}
	c.Spec.Metrics = &kairov1alpha1.MetricsSpec{Enabled: true}
	affinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
	c.Spec.PodTemplate = &kairov1alpha1.PodTemplateOverrides{
		Labels:                        map[string]string{"team": "data", LabelInstance: "hijack"},
		Annotations:                   map[string]string{"backup": "daily"},
		Affinity:                      affinity,
		Tolerations:                   []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
		NodeSelector:                  map[string]string{"disk": "ssd"},
		TopologySpreadConstraints:     []corev1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule}},
		SecurityContext:               &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)},
		PriorityClassName:             "critical",
		TerminationGracePeriodSeconds: ptr.To[int64](120),
		Env:                           []corev1.EnvVar{{Name: "GOMAXPROCS", Value: "2"}},
	}
	sts := statefulSet(t, testBuilder(t, c))
	tmpl := sts.Spec.Template
	pod := tmpl.Spec
	ctr := brokerContainer(t, sts)
	if ctr.Image != c.Spec.Image || ctr.ImagePullPolicy != corev1.PullAlways || pod.ImagePullSecrets[0].Name != "registry" {
		t.Errorf("image %q policy %q secrets %v", ctr.Image, ctr.ImagePullPolicy, pod.ImagePullSecrets)
	}
	if !reflect.DeepEqual(ctr.Resources, c.Spec.Resources) {
		t.Errorf("resources %+v", ctr.Resources)
	}
	if tmpl.Labels["team"] != "data" || tmpl.Labels[LabelInstance] != "kairo" {
		t.Errorf("labels %v: user labels are added, selector labels are the operator's", tmpl.Labels)
	}
	if tmpl.Annotations["backup"] != "daily" || tmpl.Annotations["prometheus.io/scrape"] != "true" ||
		tmpl.Annotations["prometheus.io/port"] != "8080" || tmpl.Annotations[ConfigHashAnnotation] == "" {
		t.Errorf("annotations %v", tmpl.Annotations)
	}
	if pod.Affinity != affinity || pod.Tolerations[0].Key != "dedicated" || pod.NodeSelector["disk"] != "ssd" ||
		pod.TopologySpreadConstraints[0].MaxSkew != 2 || ptr.Deref(pod.SecurityContext.RunAsUser, 0) != 1000 ||
		pod.PriorityClassName != "critical" || ptr.Deref(pod.TerminationGracePeriodSeconds, 0) != 120 {
		t.Errorf("pod overrides not applied: %+v", pod)
	}
	if last := ctr.Env[len(ctr.Env)-1]; last.Name != "GOMAXPROCS" || last.Value != "2" {
		t.Errorf("env %+v", ctr.Env)
	}
}

func TestStatefulSetRackAwareness(t *testing.T) {
	c := testCluster()
	sts := statefulSet(t, testBuilder(t, c))
	pod := sts.Spec.Template.Spec
	if pod.Affinity == nil || pod.Affinity.PodAntiAffinity == nil ||
		pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey != corev1.LabelHostname {
		t.Errorf("default affinity %+v: want brokers spread over nodes", pod.Affinity)
	}
	if len(pod.TopologySpreadConstraints) != 0 || slices.ContainsFunc(brokerContainer(t, sts).Args, func(a string) bool { return strings.HasPrefix(a, "--rack") }) {
		t.Error("rack settings without spec.rack")
	}

	c.Spec.Rack = &kairov1alpha1.RackSpec{TopologyKey: "topology.kubernetes.io/zone"}
	sts = statefulSet(t, testBuilder(t, c))
	pod = sts.Spec.Template.Spec
	ctr := brokerContainer(t, sts)
	if !slices.Contains(ctr.Args, "--rack=$(KAIRO_RACK)") {
		t.Errorf("args %v lack --rack", ctr.Args)
	}
	var rackEnv *corev1.EnvVar
	for k := range ctr.Env {
		if ctr.Env[k].Name == "KAIRO_RACK" {
			rackEnv = &ctr.Env[k]
		}
	}
	if rackEnv == nil || rackEnv.ValueFrom.FieldRef.FieldPath != "metadata.labels['topology.kubernetes.io/zone']" {
		t.Errorf("rack env %+v", rackEnv)
	}
	terms := pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	if len(terms) != 2 || terms[1].PodAffinityTerm.TopologyKey != "topology.kubernetes.io/zone" {
		t.Errorf("anti-affinity terms %+v", terms)
	}
	if len(pod.TopologySpreadConstraints) != 1 || pod.TopologySpreadConstraints[0].TopologyKey != "topology.kubernetes.io/zone" {
		t.Errorf("spread %+v", pod.TopologySpreadConstraints)
	}
}

func TestStatefulSetRetentionPolicy(t *testing.T) {
	c := testCluster()
	c.Spec.Storage.RetentionPolicy = &kairov1alpha1.StorageRetentionPolicy{
		WhenDeleted: kairov1alpha1.ClaimDelete, WhenScaled: kairov1alpha1.ClaimRetain}
	p := statefulSet(t, testBuilder(t, c)).Spec.PersistentVolumeClaimRetentionPolicy
	if p.WhenDeleted != appsv1.DeletePersistentVolumeClaimRetentionPolicyType || p.WhenScaled != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
		t.Errorf("retention %+v", p)
	}
}

func TestConfigHash(t *testing.T) {
	hash := func(mutate func(c *kairov1alpha1.KairoCluster)) string {
		c := testCluster()
		mutate(c)
		return statefulSet(t, testBuilder(t, c)).Spec.Template.Annotations[ConfigHashAnnotation]
	}
	base := hash(func(*kairov1alpha1.KairoCluster) {})
	if len(base) != 16 || base != hash(func(*kairov1alpha1.KairoCluster) {}) {
		t.Fatalf("hash %q is not stable", base)
	}
	for name, mutate := range map[string]func(c *kairov1alpha1.KairoCluster){
		"config": func(c *kairov1alpha1.KairoCluster) { c.Spec.Config = map[string]string{"log.retention.ms": "1"} },
		"image":  func(c *kairov1alpha1.KairoCluster) { c.Spec.Image = "kairolog/broker:2.0" },
		"resources": func(c *kairov1alpha1.KairoCluster) {
			c.Spec.Resources.Limits = corev1.ResourceList{"memory": resource.MustParse("1Gi")}
		},
		"pod labels": func(c *kairov1alpha1.KairoCluster) {
			c.Spec.PodTemplate = &kairov1alpha1.PodTemplateOverrides{Labels: map[string]string{"a": "b"}}
		},
		"rack":        func(c *kairov1alpha1.KairoCluster) { c.Spec.Rack = &kairov1alpha1.RackSpec{TopologyKey: "zone"} },
		"metrics":     func(c *kairov1alpha1.KairoCluster) { c.Spec.Metrics = &kairov1alpha1.MetricsSpec{Enabled: true} },
		"pull policy": func(c *kairov1alpha1.KairoCluster) { c.Spec.ImagePullPolicy = corev1.PullAlways },
	} {
		if h := hash(mutate); h == base {
			t.Errorf("changing the %s leaves the config hash unchanged: brokers would not restart", name)
		}
	}
	for name, mutate := range map[string]func(c *kairov1alpha1.KairoCluster){
		"replicas":     func(c *kairov1alpha1.KairoCluster) { c.Spec.Replicas = 5 },
		"storage size": func(c *kairov1alpha1.KairoCluster) { c.Spec.Storage.Size = resource.MustParse("20Gi") },
		"service":      func(c *kairov1alpha1.KairoCluster) { c.Spec.Service.Port = 9999 },
	} {
		if h := hash(mutate); h != base {
			t.Errorf("changing the %s changes the config hash: brokers would restart for nothing", name)
		}
	}
}

// TestStatefulSetUpdateKeepsImmutableFields applies a changed spec to an
// existing StatefulSet: the fields Kubernetes will not change stay as they
// were created, and a template the API server defaulted is left alone
// while its hash is current.
func TestStatefulSetUpdateKeepsImmutableFields(t *testing.T) {
	c := testCluster()
	b := testBuilder(t, c)
	existing := statefulSet(t, b)
	// What the API server adds to a stored template.
	existing.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	existing.Spec.Template.Spec.DNSPolicy = corev1.DNSClusterFirst
	existing.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	stored := existing.DeepCopy()

	// Nothing changed: Update is a no-op on the stored object.
	if err := (&StatefulSetBuilder{b}).Update(existing); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(existing, stored) {
		t.Error("an unchanged spec changed the stored StatefulSet: every reconcile would write it")
	}

	// Storage grows and replicas change: the claim template, selector and
	// serviceName stay; replicas follow; the template is unchanged.
	c.Spec.Storage.Size = resource.MustParse("50Gi")
	c.Spec.Storage.StorageClassName = ptr.To("other")
	b.Replicas = 4
	if err := (&StatefulSetBuilder{b}).Update(existing); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(existing.Spec.VolumeClaimTemplates, stored.Spec.VolumeClaimTemplates) ||
		!reflect.DeepEqual(existing.Spec.Selector, stored.Spec.Selector) ||
		existing.Spec.ServiceName != stored.Spec.ServiceName || existing.Spec.PodManagementPolicy != stored.Spec.PodManagementPolicy {
		t.Error("Update changed an immutable StatefulSet field")
	}
	if *existing.Spec.Replicas != 4 {
		t.Errorf("replicas %d, want 4", *existing.Spec.Replicas)
	}
	if !reflect.DeepEqual(existing.Spec.Template, stored.Spec.Template) {
		t.Error("a storage or replica change rewrote the pod template")
	}

	// A config change replaces the template with a new hash.
	c.Spec.Config = map[string]string{"log.retention.ms": "60000"}
	if err := (&StatefulSetBuilder{b}).Update(existing); err != nil {
		t.Fatal(err)
	}
	if existing.Spec.Template.Annotations[ConfigHashAnnotation] == stored.Spec.Template.Annotations[ConfigHashAnnotation] {
		t.Error("a config change kept the old template")
	}
	if !reflect.DeepEqual(existing.Spec.VolumeClaimTemplates, stored.Spec.VolumeClaimTemplates) {
		t.Error("a config change touched the claim templates")
	}
}

// TestStatefulSetGoMemoryLimit: a memory limit in spec.resources gives the
// broker a soft limit of 90 % of it (GOMEMLIMIT), which its collector
// sizes its headroom from; none without a limit, and a GOMEMLIMIT of the
// user's in spec.podTemplate.env is kept as it is.
func TestStatefulSetGoMemoryLimit(t *testing.T) {
	goMemLimit := func(c *kairov1alpha1.KairoCluster) []string {
		var values []string
		for _, e := range brokerContainer(t, statefulSet(t, testBuilder(t, c))).Env {
			if e.Name == "GOMEMLIMIT" {
				values = append(values, e.Value)
			}
		}
		return values
	}
	c := testCluster()
	c.Spec.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	if got := goMemLimit(c); got != nil {
		t.Errorf("without a memory limit: GOMEMLIMIT %v", got)
	}
	c.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}
	if got := goMemLimit(c); !slices.Equal(got, []string{"1932735276"}) {
		t.Errorf("with a 2Gi limit: GOMEMLIMIT %v, want 90 %% of it, [1932735276]", got)
	}
	c.Spec.PodTemplate = &kairov1alpha1.PodTemplateOverrides{Env: []corev1.EnvVar{{Name: "GOMEMLIMIT", Value: "1GiB"}}}
	if got := goMemLimit(c); !slices.Equal(got, []string{"1GiB"}) {
		t.Errorf("with the user's GOMEMLIMIT: %v", got)
	}
}
