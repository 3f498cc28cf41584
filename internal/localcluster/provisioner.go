package localcluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// The default StorageClass of the local cluster and its provisioner, the
// role an external provisioner (kind's local-path, a CSI driver) plays on a
// real cluster: it creates a PersistentVolume (a directory under the state
// directory) for each claim of the class, and kube-controller-manager's PV
// controller binds the two.
const (
	StorageClassName  = "standard"
	ProvisionerName   = "kairolog.io/local-directory"
	annProvisionedBy  = "pv.kubernetes.io/provisioned-by"
	annDefaultClass   = "storageclass.kubernetes.io/is-default-class"
	provisionerResync = 30 * time.Second
)

// defaultStorageClass is created at start-up.
func defaultStorageClass() *storagev1.StorageClass {
	binding := storagev1.VolumeBindingImmediate
	reclaim := corev1.PersistentVolumeReclaimDelete
	return &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{Name: StorageClassName, Annotations: map[string]string{annDefaultClass: "true"}},
		Provisioner:          ProvisionerName,
		ReclaimPolicy:        &reclaim,
		VolumeBindingMode:    &binding,
		AllowVolumeExpansion: ptr.To(true),
	}
}

// directoryProvisioner provisions, expands and deletes directory volumes.
type directoryProvisioner struct {
	client kubernetes.Interface
	root   string // volumes live in root/<pv name>
	node   string // the node the local volumes are on
	log    *slog.Logger
}

// RunProvisioner provisions, expands and deletes the directory volumes (under
// root, with node affinity to node) of the claims whose StorageClass names
// ProvisionerName, until ctx ends; kube-controller-manager's PV controller
// binds them. The local cluster runs it, and so do the test API servers
// that have kube-controller-manager but no storage add-on.
func RunProvisioner(ctx context.Context, client kubernetes.Interface, root, node string, log *slog.Logger) {
	(&directoryProvisioner{client: client, root: root, node: node, log: log}).run(ctx)
}

// run reconciles on every claim, volume or class change until ctx ends.
func (p *directoryProvisioner) run(ctx context.Context) {
	factory := informers.NewSharedInformerFactory(p.client, provisionerResync)
	claims := factory.Core().V1().PersistentVolumeClaims()
	volumes := factory.Core().V1().PersistentVolumes()
	classes := factory.Storage().V1().StorageClasses()
	changed := make(chan struct{}, 1)
	signal := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { signal() },
		UpdateFunc: func(any, any) { signal() },
		DeleteFunc: func(any) { signal() },
	}
	for _, inf := range []cache.SharedIndexInformer{claims.Informer(), volumes.Informer(), classes.Informer()} {
		_, _ = inf.AddEventHandler(handler)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	for {
		select {
		case <-ctx.Done():
			factory.Shutdown()
			return
		case <-changed:
		}
		pvcs, _ := claims.Lister().List(labels.Everything())
		pvs, _ := volumes.Lister().List(labels.Everything())
		scs, _ := classes.Lister().List(labels.Everything())
		if err := p.reconcile(ctx, pvcs, pvs, scs); err != nil && ctx.Err() == nil {
			p.log.Error("Provisioning pass failed", "err", err)
			// Retry soon without waiting for the next change.
			time.AfterFunc(time.Second, signal)
		}
	}
}

// reconcile does one pass over every claim and volume.
func (p *directoryProvisioner) reconcile(ctx context.Context, pvcs []*corev1.PersistentVolumeClaim, pvs []*corev1.PersistentVolume, scs []*storagev1.StorageClass) error {
	ours := map[string]*storagev1.StorageClass{}
	for _, sc := range scs {
		if sc.Provisioner == ProvisionerName {
			ours[sc.Name] = sc
		}
	}
	byName := map[string]*corev1.PersistentVolume{}
	for _, pv := range pvs {
		byName[pv.Name] = pv
	}
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for _, pvc := range pvcs {
		class := ptr.Deref(pvc.Spec.StorageClassName, "")
		sc, ok := ours[class]
		if !ok || pvc.DeletionTimestamp != nil {
			continue
		}
		switch {
		case pvc.Spec.VolumeName == "" && pvc.Status.Phase == corev1.ClaimPending:
			if _, exists := byName[volumeName(pvc)]; !exists {
				keep(p.provision(ctx, pvc, sc))
			}
		case pvc.Status.Phase == corev1.ClaimBound:
			if pv := byName[pvc.Spec.VolumeName]; pv != nil && pv.Annotations[annProvisionedBy] == ProvisionerName {
				keep(p.expand(ctx, pvc, pv, sc))
			}
		}
	}
	for _, pv := range pvs {
		if pv.Annotations[annProvisionedBy] == ProvisionerName && pv.Status.Phase == corev1.VolumeReleased &&
			pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete && pv.DeletionTimestamp == nil {
			keep(p.delete(ctx, pv))
		}
	}
	return firstErr
}

func volumeName(pvc *corev1.PersistentVolumeClaim) string { return "pvc-" + string(pvc.UID) }

func (p *directoryProvisioner) provision(ctx context.Context, pvc *corev1.PersistentVolumeClaim, sc *storagev1.StorageClass) error {
	name := volumeName(pvc)
	dir := filepath.Join(p.root, name)
	// Owned by root with mode 0755, as the root of a fresh filesystem: a
	// pod whose user is not root writes to it through its fsGroup, as on a
	// cloud disk.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.IsZero() {
		size = resource.MustParse("1Gi")
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	if sc.ReclaimPolicy != nil {
		reclaim = *sc.ReclaimPolicy
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annProvisionedBy: ProvisionerName}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   pvc.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: reclaim,
			StorageClassName:              sc.Name,
			VolumeMode:                    pvc.Spec.VolumeMode,
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID,
			},
			// A local volume, as a local-disk provisioner makes: unlike
			// hostPath, the kubelet applies the pod's fsGroup to it.
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				Local: &corev1.LocalVolumeSource{Path: dir},
			},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{p.node},
				}}}},
			}},
		},
	}
	if _, err := p.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create volume for %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	p.log.Info("Provisioned volume", "claim", pvc.Namespace+"/"+pvc.Name, "volume", name, "size", size.String())
	return nil
}

// expand grows a bound volume to its claim's new request, doing both the
// controller part (PV capacity) and the node part (claim status) of a
// resize: a directory has no filesystem to grow.
func (p *directoryProvisioner) expand(ctx context.Context, pvc *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume, sc *storagev1.StorageClass) error {
	want := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	have := pvc.Status.Capacity[corev1.ResourceStorage]
	if want.Cmp(have) <= 0 || !ptr.Deref(sc.AllowVolumeExpansion, false) {
		return nil
	}
	if pvCap := pv.Spec.Capacity[corev1.ResourceStorage]; pvCap.Cmp(want) < 0 {
		pv = pv.DeepCopy()
		pv.Spec.Capacity[corev1.ResourceStorage] = want
		if _, err := p.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("expand volume %s: %w", pv.Name, err)
		}
	}
	pvc = pvc.DeepCopy()
	pvc.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: want}
	pvc.Status.AllocatedResources = corev1.ResourceList{corev1.ResourceStorage: want}
	pvc.Status.AllocatedResourceStatuses = nil
	var conds []corev1.PersistentVolumeClaimCondition
	for _, c := range pvc.Status.Conditions {
		if !strings.Contains(string(c.Type), "Resiz") {
			conds = append(conds, c)
		}
	}
	pvc.Status.Conditions = conds
	if _, err := p.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("expand claim %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	p.log.Info("Expanded volume", "claim", pvc.Namespace+"/"+pvc.Name, "volume", pv.Name, "size", want.String())
	return nil
}

func (p *directoryProvisioner) delete(ctx context.Context, pv *corev1.PersistentVolume) error {
	for _, path := range volumePaths(pv) {
		if filepath.Dir(path) == p.root {
			if err := os.RemoveAll(path); err != nil {
				return err
			}
		}
	}
	err := p.client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete volume %s: %w", pv.Name, err)
	}
	p.log.Info("Deleted released volume", "volume", pv.Name)
	return nil
}

// volumePaths is where a volume's data is on this machine.
func volumePaths(pv *corev1.PersistentVolume) []string {
	var out []string
	if pv.Spec.Local != nil {
		out = append(out, pv.Spec.Local.Path)
	}
	if pv.Spec.HostPath != nil {
		out = append(out, pv.Spec.HostPath.Path)
	}
	return out
}
