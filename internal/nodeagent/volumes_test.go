package nodeagent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func volumeTestPod(volumes ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kairo-0", Namespace: "team", UID: "uid-0", Labels: map[string]string{"app": "kairo"}},
		Spec: corev1.PodSpec{
			ServiceAccountName: "kairo",
			Volumes:            volumes,
			Containers: []corev1.Container{{Name: "broker", VolumeMounts: []corev1.VolumeMount{
				{Name: "data", MountPath: "/var/lib/kairolog/data"},
				{Name: "config", MountPath: "/etc/kairolog", ReadOnly: true},
				{Name: "api", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
				{Name: "scratch", MountPath: "/var/lib/kairolog/data/tmp", SubPath: "tmp"},
			}}},
		},
	}
}

func readVolumeFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestVolumesMaterialise(t *testing.T) {
	pvDir := t.TempDir()
	src := newFakeSource()
	src.configMaps["team/broker-config"] = &corev1.ConfigMap{
		Data:       map[string]string{"broker.properties": "segment.bytes=1024\n", "ignored": "x"},
		BinaryData: map[string][]byte{"blob": {0, 1, 2}},
	}
	src.configMaps["team/kube-root-ca.crt"] = &corev1.ConfigMap{Data: map[string]string{"ca.crt": "CA PEM"}}
	src.claims["team/data-kairo-0"] = &corev1.PersistentVolumeClaim{
		Spec:   corev1.PersistentVolumeClaimSpec{VolumeName: "pvc-1"},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
	}
	src.volumes["pvc-1"] = &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: pvDir}}}}

	pod := volumeTestPod(
		corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-kairo-0"}}},
		corev1.Volume{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "broker-config"},
			Items:                []corev1.KeyToPath{{Key: "broker.properties", Path: "broker.properties"}, {Key: "blob", Path: "bin/blob", Mode: ptr.To[int32](0o600)}},
		}}},
		corev1.Volume{Name: "api", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: ptr.To[int32](0o644),
			Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
					Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
			},
		}}},
		corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	)
	v := newPodVolumes(pod, t.TempDir(), src)
	now := time.Now()
	v.now = func() time.Time { return now }
	if err := v.setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	mounts, err := v.mounts(&pod.Spec.Containers[0])
	if err != nil {
		t.Fatal(err)
	}
	byTarget := map[string]hostMount{}
	for i, m := range mounts {
		byTarget[m.Target] = m
		if i > 0 && strings.Count(m.Target, "/") < strings.Count(mounts[i-1].Target, "/") {
			t.Errorf("mount %s comes after the deeper %s", m.Target, mounts[i-1].Target)
		}
	}
	if got := byTarget["/var/lib/kairolog/data"].Source; got != pvDir {
		t.Errorf("the claim mounts %q, want its volume's directory %q", got, pvDir)
	}
	cfg := byTarget["/etc/kairolog"]
	if !cfg.ReadOnly {
		t.Error("a readOnly volumeMount is mounted read-write")
	}
	if got := readVolumeFile(t, cfg.Source, "broker.properties"); got != "segment.bytes=1024\n" {
		t.Errorf("broker.properties = %q", got)
	}
	if info, err := os.Stat(filepath.Join(cfg.Source, "bin/blob")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("bin/blob: %v, mode %v; want 0600", err, info.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(cfg.Source, "ignored")); !os.IsNotExist(err) {
		t.Error("a key not listed in items was projected")
	}
	api := byTarget["/var/run/secrets/kubernetes.io/serviceaccount"].Source
	token := readVolumeFile(t, api, "token")
	if !strings.HasPrefix(token, "token-1-for-team-kairo-0") || !strings.Contains(token, "ttl=3607") {
		t.Errorf("token = %q", token)
	}
	if readVolumeFile(t, api, "ca.crt") != "CA PEM" || readVolumeFile(t, api, "namespace") != "team" {
		t.Error("projected ca.crt or namespace is wrong")
	}
	scratch := byTarget["/var/lib/kairolog/data/tmp"].Source
	if filepath.Base(scratch) != "tmp" {
		t.Errorf("subPath mount source = %s", scratch)
	}
	if info, err := os.Stat(scratch); err != nil || !info.IsDir() {
		t.Errorf("subPath directory was not created: %v", err)
	}

	// A refresh before 80% of the token's life reuses it; after, a new one
	// is requested. ConfigMap changes reach the volume.
	src.configMaps["team/broker-config"].Data["broker.properties"] = "segment.bytes=2048\n"
	if err := v.setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if src.tokenCount() != 1 {
		t.Errorf("token re-requested %d times before it aged", src.tokenCount()-1)
	}
	if got := readVolumeFile(t, cfg.Source, "broker.properties"); got != "segment.bytes=2048\n" {
		t.Errorf("after the ConfigMap changed, broker.properties = %q", got)
	}
	now = now.Add(49 * time.Minute)
	if err := v.setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if src.tokenCount() != 2 || !strings.HasPrefix(readVolumeFile(t, api, "token"), "token-2-") {
		t.Errorf("token not refreshed after 80%% of its lifetime (requests: %d)", src.tokenCount())
	}
}

func TestVolumesWaitForClaim(t *testing.T) {
	src := newFakeSource()
	src.claims["team/data-kairo-0"] = &corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}
	pod := volumeTestPod(corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-kairo-0"}}})
	err := newPodVolumes(pod, t.TempDir(), src).setup(context.Background())
	if err == nil || !strings.Contains(err.Error(), "waiting for it to be bound") {
		t.Fatalf("unbound claim: err = %v", err)
	}
}

func TestVolumesOptionalAndUnsupported(t *testing.T) {
	src := newFakeSource()
	pod := volumeTestPod(corev1.Volume{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Optional: ptr.To(true)}}})
	if err := newPodVolumes(pod, t.TempDir(), src).setup(context.Background()); err != nil {
		t.Fatalf("optional missing ConfigMap: %v", err)
	}
	pod = volumeTestPod(corev1.Volume{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}}}})
	if err := newPodVolumes(pod, t.TempDir(), src).setup(context.Background()); err == nil {
		t.Fatal("a required missing ConfigMap was accepted")
	}
	pod = volumeTestPod(corev1.Volume{Name: "nfs", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "x", Path: "/"}}})
	err := newPodVolumes(pod, t.TempDir(), src).setup(context.Background())
	if err == nil || !strings.Contains(err.Error(), "unsupported volume type") {
		t.Fatalf("nfs volume: err = %v", err)
	}
}
