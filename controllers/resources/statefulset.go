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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// StatefulSetBuilder builds the brokers' StatefulSet. Pods are never
// replaced by the StatefulSet controller on a template change (OnDelete):
// the operator restarts them one at a time when the brokers say it is
// safe. All pods start and stop in parallel, since brokers of a new
// cluster must find each other to form the quorum.
type StatefulSetBuilder struct{ *Builder }

// Build returns the StatefulSet's immutable skeleton: selector, serviceName,
// podManagementPolicy and the data volume claim template.
func (b *StatefulSetBuilder) Build() (client.Object, error) {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: StatefulSetName(b.Cluster), Namespace: b.Cluster.Namespace},
		Spec: appsv1.StatefulSetSpec{
			Selector:             &metav1.LabelSelector{MatchLabels: SelectorLabels(b.Cluster)},
			ServiceName:          HeadlessServiceName(b.Cluster),
			PodManagementPolicy:  appsv1.ParallelPodManagement,
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{b.claimTemplate()},
		},
	}, nil
}

// Update sets replicas, the update strategy, the claim retention policy and
// the pod template. The template is replaced only when its hash differs, so
// the fields the API server defaulted in the stored template do not make
// every reconcile look like a change.
func (b *StatefulSetBuilder) Update(obj client.Object) error {
	sts, ok := obj.(*appsv1.StatefulSet)
	if !ok {
		return fmt.Errorf("resources: StatefulSetBuilder got %T", obj)
	}
	b.mergeLabels(sts)
	sts.SetAnnotations(merge(sts.GetAnnotations(), map[string]string{
		VotersAnnotation:             strconv.Itoa(int(b.Voters)),
		DefaultReplicationAnnotation: strconv.Itoa(int(b.DefaultReplication))}))
	if b.Certificates != "" {
		sts.Annotations[PeerTLSAnnotation] = b.peerTLS()
	}
	sts.Spec.Replicas = ptr.To(b.Replicas)
	sts.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	sts.Spec.PersistentVolumeClaimRetentionPolicy = b.retentionPolicy()
	tmpl, err := b.PodTemplate()
	if err != nil {
		return err
	}
	if sts.Spec.Template.Annotations[ConfigHashAnnotation] != tmpl.Annotations[ConfigHashAnnotation] {
		sts.Spec.Template = tmpl
	}
	return b.own(sts)
}

func (b *StatefulSetBuilder) claimTemplate() corev1.PersistentVolumeClaim {
	st := b.Cluster.Spec.Storage
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: DataVolume, Labels: Labels(b.Cluster)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: st.StorageClassName,
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: st.Size},
			},
		},
	}
}

func (b *StatefulSetBuilder) retentionPolicy() *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy {
	p := &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
	}
	if r := b.Cluster.Spec.Storage.RetentionPolicy; r != nil {
		if r.WhenDeleted == kairov1alpha1.ClaimDelete {
			p.WhenDeleted = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
		}
		if r.WhenScaled == kairov1alpha1.ClaimDelete {
			p.WhenScaled = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
		}
	}
	return p
}

// PodTemplate is the broker pod template, its kairolog.io/config-hash
// annotation set to TemplateHash of the rest of it and the broker
// configuration.
func (b *Builder) PodTemplate() (corev1.PodTemplateSpec, error) {
	o := b.overrides()
	annotations := merge(nil, o.Annotations)
	if m := b.Cluster.Spec.Metrics; m != nil && m.Enabled {
		annotations = merge(annotations, map[string]string{
			"prometheus.io/scrape": "true",
			"prometheus.io/port":   strconv.Itoa(HTTPPort),
			"prometheus.io/path":   "/metrics",
		})
	}
	if b.Certificates != "" {
		annotations = merge(annotations, map[string]string{
			CertificatesAnnotation: b.Certificates,
			PeerTLSAnnotation:      b.peerTLS(),
		})
	}
	if b.httpScheme() == corev1.URISchemeHTTPS {
		annotations = merge(annotations, map[string]string{HTTPTLSAnnotation: "true"})
		if _, scraped := annotations["prometheus.io/scrape"]; scraped {
			annotations["prometheus.io/scheme"] = "https"
		}
	}
	grace := DefaultTerminationGracePeriodSeconds
	if o.TerminationGracePeriodSeconds != nil {
		grace = *o.TerminationGracePeriodSeconds
	}
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			// The operator's labels win: the selector must keep matching.
			Labels:      merge(merge(nil, o.Labels), Labels(b.Cluster)),
			Annotations: annotations,
		},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{b.container()},
			Volumes:                       b.volumes(),
			TerminationGracePeriodSeconds: ptr.To(grace),
			SecurityContext:               b.podSecurityContext(),
			Affinity:                      b.affinity(),
			TopologySpreadConstraints:     b.topologySpread(),
			Tolerations:                   o.Tolerations,
			NodeSelector:                  o.NodeSelector,
			PriorityClassName:             o.PriorityClassName,
			ImagePullSecrets:              b.Cluster.Spec.ImagePullSecrets,
			// Brokers never call the Kubernetes API.
			AutomountServiceAccountToken: ptr.To(false),
			EnableServiceLinks:           ptr.To(false),
		},
	}
	hash, err := TemplateHash(b.Properties(), tmpl)
	if err != nil {
		return tmpl, err
	}
	tmpl.Annotations = merge(tmpl.Annotations, map[string]string{ConfigHashAnnotation: hash})
	return tmpl, nil
}

// TemplateHash hashes the broker configuration and a pod template (without
// its hash annotation). Go's JSON encoding sorts map keys, so equal inputs
// hash equally.
func TemplateHash(properties string, tmpl corev1.PodTemplateSpec) (string, error) {
	raw, err := json.Marshal(tmpl)
	if err != nil {
		return "", fmt.Errorf("resources: hashing the pod template: %w", err)
	}
	h := sha256.New()
	h.Write([]byte(properties))
	h.Write([]byte{0})
	h.Write(raw)
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// goMemoryLimit is the broker's GOMEMLIMIT when spec.resources sets a
// memory limit: 90 % of it, what the broker would read from its cgroup
// (cmd/broker/gc.go), set here so that a broker knows its limit however
// its container is run (as Strimzi sizes a broker's JVM heap from the
// same limit). A GOMEMLIMIT in spec.podTemplate.env stays the user's.
func (b *Builder) goMemoryLimit() (corev1.EnvVar, bool) {
	limit, ok := b.Cluster.Spec.Resources.Limits[corev1.ResourceMemory]
	if !ok || limit.Value() <= 0 || slices.ContainsFunc(b.overrides().Env, func(e corev1.EnvVar) bool { return e.Name == "GOMEMLIMIT" }) {
		return corev1.EnvVar{}, false
	}
	return corev1.EnvVar{Name: "GOMEMLIMIT", Value: strconv.FormatInt(limit.Value()/10*9, 10)}, true
}

func (b *Builder) overrides() kairov1alpha1.PodTemplateOverrides {
	if o := b.Cluster.Spec.PodTemplate; o != nil {
		return *o
	}
	return kairov1alpha1.PodTemplateOverrides{}
}

// InitialVoters is the --initial-voters value: the first Voters brokers'
// raft addresses through the headless Service.
func (b *Builder) InitialVoters() string {
	voters := make([]string, 0, b.Voters)
	for id := int32(0); id < b.Voters; id++ {
		voters = append(voters, fmt.Sprintf("%d@%s:%d", id, PeerHost(b.Cluster, id), RaftPort))
	}
	return strings.Join(voters, ",")
}

func (b *Builder) container() corev1.Container {
	// The broker id defaults to the ordinal at the end of the hostname
	// (pod <cluster>-2 is broker 2), so no --id flag.
	args := []string{
		"--data-dir=" + DataDir,
		"--config-file=" + ConfigFile,
		// All interfaces: kubectl port-forward dials localhost in the pod.
		fmt.Sprintf("--listen=:%d", HTTPPort),
		fmt.Sprintf("--raft-listen=:%d", RaftPort),
		fmt.Sprintf("--peer-listen=:%d", PeerPort),
		fmt.Sprintf("--kafka-listen=:%d", KafkaPort),
		fmt.Sprintf("--kafka-gateway-listen=:%d", KafkaGatewayPort),
		fmt.Sprintf("--advertised-address=$(POD_NAME).%s.$(POD_NAMESPACE).svc:%d", HeadlessServiceName(b.Cluster), HTTPPort),
		fmt.Sprintf("--peer-advertised-address=$(POD_NAME).%s.$(POD_NAMESPACE).svc:%d", HeadlessServiceName(b.Cluster), PeerPort),
		fmt.Sprintf("--kafka-advertised-address=$(POD_NAME).%s.$(POD_NAMESPACE).svc:%d", HeadlessServiceName(b.Cluster), KafkaPort),
		// The gateway names itself as every partition's leader at the
		// address kubectl port-forward svc/<cluster> <port> exposes.
		fmt.Sprintf("--kafka-gateway-advertised-address=localhost:%d", KafkaGatewayServicePort(b.Cluster)),
		"--peer-secret-file=" + PeerSecretFile,
		"--initial-voters=" + b.InitialVoters(),
	}
	if b.Certificates != "" {
		args = append(args,
			"--tls-cert-file="+TLSMountDir+"/$(POD_NAME).crt",
			"--tls-key-file="+TLSMountDir+"/$(POD_NAME).key",
			"--tls-ca-file="+TLSMountDir+"/"+CACertKey,
			"--peer-tls="+b.peerTLS())
		args = append(args, b.clientSecurityArgs()...)
	}
	env := []corev1.EnvVar{
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
	}
	if r := b.Cluster.Spec.Rack; r != nil {
		// The rack is the pod's copy of its node's topology label (Kubernetes
		// copies topology.kubernetes.io/zone and /region onto pods when it
		// binds them); a pod without the label runs without a rack.
		env = append(env, corev1.EnvVar{Name: "KAIRO_RACK", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: fmt.Sprintf("metadata.labels['%s']", r.TopologyKey)}}})
		args = append(args, "--rack=$(KAIRO_RACK)")
	}
	if e, ok := b.goMemoryLimit(); ok {
		env = append(env, e)
	}
	env = append(env, b.overrides().Env...)
	probe := func(path string, period, timeout, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: path, Port: intstr.FromString(HTTPPortName), Scheme: b.httpScheme()}},
			PeriodSeconds: period, TimeoutSeconds: timeout, FailureThreshold: failures, SuccessThreshold: 1,
		}
	}
	return corev1.Container{
		Name:            ContainerName,
		Image:           b.Image(),
		ImagePullPolicy: b.Cluster.Spec.ImagePullPolicy,
		Args:            args,
		Env:             env,
		Ports: []corev1.ContainerPort{
			{Name: HTTPPortName, ContainerPort: HTTPPort, Protocol: corev1.ProtocolTCP},
			{Name: RaftPortName, ContainerPort: RaftPort, Protocol: corev1.ProtocolTCP},
			{Name: PeerPortName, ContainerPort: PeerPort, Protocol: corev1.ProtocolTCP},
			{Name: KafkaPortName, ContainerPort: KafkaPort, Protocol: corev1.ProtocolTCP},
			{Name: KafkaGatewayPortName, ContainerPort: KafkaGatewayPort, Protocol: corev1.ProtocolTCP},
		},
		Resources: b.Cluster.Spec.Resources,
		// A broker recovering its logs after a crash answers /health only
		// when done; the startup probe gives it ten minutes before the
		// liveness probe may restart it.
		StartupProbe:   probe("/health", 5, 3, 120),
		LivenessProbe:  probe("/health", 10, 5, 3),
		ReadinessProbe: probe("/ready", 5, 3, 3),
		VolumeMounts: append([]corev1.VolumeMount{
			{Name: DataVolume, MountPath: DataMountPath},
			{Name: ConfigVolume, MountPath: ConfigMountDir, ReadOnly: true},
			{Name: PeerSecretVolume, MountPath: PeerSecretMountDir, ReadOnly: true},
			{Name: TmpVolume, MountPath: "/tmp"},
		}, b.tlsMounts()...),
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

func (b *Builder) volumes() []corev1.Volume {
	vols := []corev1.Volume{
		{Name: ConfigVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapName(b.Cluster)},
			Items:                []corev1.KeyToPath{{Key: PropertiesKey, Path: PropertiesKey}},
		}}},
		// Read-only, and readable whatever user the pod template's security
		// context runs the broker as (a group-only mode needs fsGroup).
		{Name: PeerSecretVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  PeerSecretName(b.Cluster),
			Items:       []corev1.KeyToPath{{Key: PeerSecretKey, Path: PeerSecretKey}},
			DefaultMode: ptr.To(int32(0o444)),
		}}},
		{Name: TmpVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	if b.Certificates != "" {
		// Every broker's certificate and key, and the CA bundle, in one
		// directory, read-only and readable whatever user the pod
		// template's security context runs the broker as, as the peer
		// secret is.
		vols = append(vols, corev1.Volume{Name: TLSVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: ptr.To(int32(0o444)),
			Sources: append(b.brokerCertProjections(),
				corev1.VolumeProjection{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: CACertSecretName(b.Cluster)},
					Items: []corev1.KeyToPath{{Key: CACertKey, Path: CACertKey}}}}),
		}}})
	}
	return vols
}

// brokerCertProjections put every broker's certificate and key into the
// TLS volume as <pod>.crt and <pod>.key: the operator's broker
// certificates' Secret, or with a cert-manager issuer the Secret
// cert-manager writes for each broker (tls.crt and tls.key renamed).
func (b *Builder) brokerCertProjections() []corev1.VolumeProjection {
	if !IssuedByCertManager(b.Cluster) {
		return []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: BrokerCertsSecretName(b.Cluster)}}}}
	}
	out := make([]corev1.VolumeProjection, 0, b.Replicas)
	for id := range b.Replicas {
		out = append(out, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: BrokerTLSSecretName(b.Cluster, id)},
			Items: []corev1.KeyToPath{{Key: TLSCertKey, Path: BrokerCertKey(b.Cluster, id)},
				{Key: TLSKeyKey, Path: BrokerKeyKey(b.Cluster, id)}}}})
	}
	return out
}

func (b *Builder) tlsMounts() []corev1.VolumeMount {
	if b.Certificates == "" {
		return nil
	}
	return []corev1.VolumeMount{{Name: TLSVolume, MountPath: TLSMountDir, ReadOnly: true}}
}

// peerTLS is the --peer-tls mode, required unless the builder says otherwise.
func (b *Builder) peerTLS() string {
	if b.PeerTLS == "" {
		return "required"
	}
	return b.PeerTLS
}

func (b *Builder) podSecurityContext() *corev1.PodSecurityContext {
	if sc := b.overrides().SecurityContext; sc != nil {
		return sc
	}
	return &corev1.PodSecurityContext{
		RunAsNonRoot:        ptr.To(true),
		RunAsUser:           ptr.To(DefaultUserID),
		RunAsGroup:          ptr.To(DefaultUserID),
		FSGroup:             ptr.To(DefaultUserID),
		FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
		SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// affinity is the spec's, or a preference for one broker per node (and per
// rack when racks are on), so that losing a node costs one broker.
func (b *Builder) affinity() *corev1.Affinity {
	if a := b.overrides().Affinity; a != nil {
		return a
	}
	selector := &metav1.LabelSelector{MatchLabels: SelectorLabels(b.Cluster)}
	terms := []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
		LabelSelector: selector, TopologyKey: corev1.LabelHostname}}}
	if r := b.Cluster.Spec.Rack; r != nil {
		terms = append(terms, corev1.WeightedPodAffinityTerm{Weight: 50, PodAffinityTerm: corev1.PodAffinityTerm{
			LabelSelector: selector, TopologyKey: r.TopologyKey}})
	}
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: terms}}
}

// topologySpread is the spec's, or with racks on an even spread over racks.
func (b *Builder) topologySpread() []corev1.TopologySpreadConstraint {
	if tsc := b.overrides().TopologySpreadConstraints; len(tsc) > 0 {
		return tsc
	}
	r := b.Cluster.Spec.Rack
	if r == nil {
		return nil
	}
	return []corev1.TopologySpreadConstraint{{
		MaxSkew:           1,
		TopologyKey:       r.TopologyKey,
		WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: SelectorLabels(b.Cluster)},
	}}
}
