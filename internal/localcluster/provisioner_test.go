package localcluster

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func TestDirectoryProvisioner(t *testing.T) {
	ctx := context.Background()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-kairo-0", Namespace: "team", UID: "claim-uid"},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To(StorageClassName),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
	other := pvc.DeepCopy()
	other.Name, other.UID, other.Spec.StorageClassName = "elsewhere", "other-uid", ptr.To("premium")
	sc := defaultStorageClass()
	client := fake.NewClientset(pvc, other, sc)
	root := t.TempDir()
	p := &directoryProvisioner{client: client, root: root, node: "kairo-local", log: slog.New(slog.DiscardHandler)}
	classes := []*storagev1.StorageClass{sc}

	// A pending claim of our class gets a volume pre-bound to it.
	if err := p.reconcile(ctx, []*corev1.PersistentVolumeClaim{pvc, other}, nil, classes); err != nil {
		t.Fatal(err)
	}
	pvs, _ := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if len(pvs.Items) != 1 {
		t.Fatalf("%d volumes, want one (the other claim's class is not ours)", len(pvs.Items))
	}
	pv := pvs.Items[0]
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID || pv.Spec.StorageClassName != StorageClassName ||
		pv.Annotations[annProvisionedBy] != ProvisionerName || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		t.Errorf("volume = %+v", pv)
	}
	if got := pv.Spec.Capacity[corev1.ResourceStorage]; got.String() != "1Gi" {
		t.Errorf("capacity %s", got.String())
	}
	if pv.Spec.Local == nil || pv.Spec.NodeAffinity == nil {
		t.Fatalf("volume source %+v, node affinity %+v; want a local volume on the node", pv.Spec.PersistentVolumeSource, pv.Spec.NodeAffinity)
	}
	dir := pv.Spec.Local.Path
	if filepath.Dir(dir) != root {
		t.Errorf("volume directory %s is not under %s", dir, root)
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		t.Fatalf("volume directory: %v", err)
	}

	// Once bound, a larger request grows the volume and the claim's status.
	bound := pvc.DeepCopy()
	bound.Spec.VolumeName = pv.Name
	bound.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("3Gi")
	bound.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
		Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}
	if _, err := client.CoreV1().PersistentVolumeClaims("team").Update(ctx, bound, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := p.reconcile(ctx, []*corev1.PersistentVolumeClaim{bound}, []*corev1.PersistentVolume{&pv}, classes); err != nil {
		t.Fatal(err)
	}
	got, _ := client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
	if c := got.Spec.Capacity[corev1.ResourceStorage]; c.String() != "3Gi" {
		t.Errorf("volume capacity after expansion %s", c.String())
	}
	claim, _ := client.CoreV1().PersistentVolumeClaims("team").Get(ctx, pvc.Name, metav1.GetOptions{})
	if c := claim.Status.Capacity[corev1.ResourceStorage]; c.String() != "3Gi" {
		t.Errorf("claim capacity after expansion %s", c.String())
	}

	// The claim is deleted and the PV controller releases the volume: the
	// directory and the object go.
	released := got.DeepCopy()
	released.Status.Phase = corev1.VolumeReleased
	if err := p.reconcile(ctx, nil, []*corev1.PersistentVolume{released}, classes); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("released volume's directory still exists: %v", err)
	}
	if pvs, _ := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{}); len(pvs.Items) != 0 {
		t.Errorf("released volume object still exists")
	}
}
