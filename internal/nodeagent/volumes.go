package nodeagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Default file modes of the kubelet's volume plugins.
const (
	defaultVolumeMode = 0o644
	defaultTokenTTL   = int64(3600)
)

// podVolumes materialises a pod's volumes as host directories and keeps the
// projected ones (ConfigMaps, Secrets, downward API, service-account tokens)
// current while the pod runs.
type podVolumes struct {
	pod *corev1.Pod
	dir string // <pod dir>/volumes
	src objectSource

	mu     sync.Mutex
	paths  map[string]string      // volume name → host path
	tokens map[string]cachedToken // "<volume>/<path>" → token
	now    func() time.Time
}

type cachedToken struct {
	token    string
	issued   time.Time
	lifetime time.Duration
}

// hostMount is one bind mount into the pod's mount namespace.
type hostMount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

func newPodVolumes(pod *corev1.Pod, dir string, src objectSource) *podVolumes {
	return &podVolumes{pod: pod, dir: dir, src: src, paths: map[string]string{}, tokens: map[string]cachedToken{}, now: time.Now}
}

// setPod takes a newer version of the pod (labels and annotations feed
// downward-API files).
func (v *podVolumes) setPod(pod *corev1.Pod) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.pod = pod
}

// setup materialises every volume. It is safe to call again: that is how
// projected content is refreshed.
func (v *podVolumes) setup(ctx context.Context) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, vol := range v.pod.Spec.Volumes {
		path, err := v.materialise(ctx, vol)
		if err != nil {
			return fmt.Errorf("volume %q: %w", vol.Name, err)
		}
		v.paths[vol.Name] = path
	}
	return nil
}

// mounts returns the bind mounts of container c, parents before children.
func (v *podVolumes) mounts(c *corev1.Container) ([]hostMount, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []hostMount
	for _, m := range c.VolumeMounts {
		src, ok := v.paths[m.Name]
		if !ok {
			return nil, fmt.Errorf("container %s mounts unknown volume %q", c.Name, m.Name)
		}
		if m.SubPath != "" {
			if !filepath.IsLocal(m.SubPath) {
				return nil, fmt.Errorf("container %s: subPath %q must be relative and stay inside the volume", c.Name, m.SubPath)
			}
			src = filepath.Join(src, m.SubPath)
			if _, err := os.Stat(src); os.IsNotExist(err) {
				if err := os.MkdirAll(src, 0o755); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, hostMount{Source: src, Target: m.MountPath, ReadOnly: m.ReadOnly})
	}
	return sortMounts(out), nil
}

// sortMounts orders mounts parents first, so that a mount inside another
// volume is not hidden by it.
func sortMounts(ms []hostMount) []hostMount {
	sort.SliceStable(ms, func(i, j int) bool {
		return strings.Count(filepath.Clean(ms[i].Target), "/") < strings.Count(filepath.Clean(ms[j].Target), "/")
	})
	return ms
}

// materialise creates or refreshes one volume and applies the pod's
// fsGroup where the kubelet would: the pod's change policy for emptyDir and
// local persistent volumes, always (read-only bits) for the projected kinds
// the node rewrites, never for hostPath.
func (v *podVolumes) materialise(ctx context.Context, vol corev1.Volume) (string, error) {
	fsGroup, policy := podFSGroup(v.pod)
	dir, kind, err := v.materialiseFiles(ctx, vol)
	if err != nil {
		return "", err
	}
	switch kind {
	case ownedByPolicy:
		err = setVolumeOwnership(dir, fsGroup, policy, false)
	case ownedReadOnly:
		err = setVolumeOwnership(dir, fsGroup, nil, true)
	}
	if err != nil {
		return "", fmt.Errorf("fsGroup %d: %w", *fsGroup, err)
	}
	return dir, nil
}

// volumeOwnership says how a volume type takes the pod's fsGroup.
type volumeOwnership int

const (
	notOwned      volumeOwnership = iota // hostPath: left as it is
	ownedByPolicy                        // emptyDir, local PV: fsGroupChangePolicy
	ownedReadOnly                        // configMap, secret, downwardAPI, projected
)

func (v *podVolumes) materialiseFiles(ctx context.Context, vol corev1.Volume) (string, volumeOwnership, error) {
	src := vol.VolumeSource
	switch {
	case src.EmptyDir != nil:
		dir := filepath.Join(v.dir, "empty-dir", vol.Name)
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return "", notOwned, err
		}
		return dir, ownedByPolicy, os.Chmod(dir, 0o777)
	case src.HostPath != nil:
		dir, err := hostPathVolume(src.HostPath)
		return dir, notOwned, err
	case src.PersistentVolumeClaim != nil:
		return v.claimPath(ctx, src.PersistentVolumeClaim.ClaimName)
	}
	dir, err := v.materialiseProjected(ctx, vol)
	return dir, ownedReadOnly, err
}

func (v *podVolumes) materialiseProjected(ctx context.Context, vol corev1.Volume) (string, error) {
	src := vol.VolumeSource
	switch {
	case src.ConfigMap != nil:
		files, err := v.configMapFiles(ctx, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, src.ConfigMap.DefaultMode)
		if err != nil {
			return "", err
		}
		return v.writeProjected("configmap", vol.Name, files)
	case src.Secret != nil:
		files, err := v.secretFiles(ctx, src.Secret.SecretName, src.Secret.Items, src.Secret.Optional, src.Secret.DefaultMode)
		if err != nil {
			return "", err
		}
		return v.writeProjected("secret", vol.Name, files)
	case src.DownwardAPI != nil:
		files, err := v.downwardFiles(src.DownwardAPI.Items, src.DownwardAPI.DefaultMode)
		if err != nil {
			return "", err
		}
		return v.writeProjected("downward-api", vol.Name, files)
	case src.Projected != nil:
		files, err := v.projectedFiles(ctx, vol.Name, src.Projected)
		if err != nil {
			return "", err
		}
		return v.writeProjected("projected", vol.Name, files)
	}
	return "", fmt.Errorf("unsupported volume type (this node supports emptyDir, hostPath, persistentVolumeClaim, configMap, secret, downwardAPI and projected)")
}

func (v *podVolumes) writeProjected(kind, name string, files map[string]fileContent) (string, error) {
	dir := filepath.Join(v.dir, kind, name)
	_, err := writeAtomicDir(dir, files)
	return dir, err
}

func hostPathVolume(hp *corev1.HostPathVolumeSource) (string, error) {
	typ := corev1.HostPathUnset
	if hp.Type != nil {
		typ = *hp.Type
	}
	switch typ {
	case corev1.HostPathDirectoryOrCreate:
		return hp.Path, os.MkdirAll(hp.Path, 0o755)
	case corev1.HostPathFileOrCreate:
		if err := os.MkdirAll(filepath.Dir(hp.Path), 0o755); err != nil {
			return "", err
		}
		f, err := os.OpenFile(hp.Path, os.O_CREATE|os.O_RDONLY, 0o644)
		if err != nil {
			return "", err
		}
		return hp.Path, f.Close()
	case corev1.HostPathUnset:
		return hp.Path, nil
	}
	if _, err := os.Stat(hp.Path); err != nil {
		return "", fmt.Errorf("hostPath %s: %w", hp.Path, err)
	}
	return hp.Path, nil
}

// claimPath follows a bound claim to its PersistentVolume's directory. A
// local volume takes the pod's fsGroup; a hostPath one, as on a kubelet,
// does not.
func (v *podVolumes) claimPath(ctx context.Context, claim string) (string, volumeOwnership, error) {
	pvc, err := v.src.PersistentVolumeClaim(ctx, v.pod.Namespace, claim)
	if err != nil {
		return "", notOwned, fmt.Errorf("claim %s: %w", claim, err)
	}
	if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" {
		return "", notOwned, fmt.Errorf("claim %s is %s, waiting for it to be bound", claim, pvc.Status.Phase)
	}
	pv, err := v.src.PersistentVolume(ctx, pvc.Spec.VolumeName)
	if err != nil {
		return "", notOwned, fmt.Errorf("volume %s of claim %s: %w", pvc.Spec.VolumeName, claim, err)
	}
	switch {
	case pv.Spec.HostPath != nil:
		return pv.Spec.HostPath.Path, notOwned, os.MkdirAll(pv.Spec.HostPath.Path, 0o755)
	case pv.Spec.Local != nil:
		// A local volume is a disk's root: it must exist already.
		info, err := os.Stat(pv.Spec.Local.Path)
		if err != nil || !info.IsDir() {
			return "", notOwned, fmt.Errorf("local volume %s: %s is not a directory", pv.Name, pv.Spec.Local.Path)
		}
		return pv.Spec.Local.Path, ownedByPolicy, nil
	}
	return "", notOwned, fmt.Errorf("volume %s is neither hostPath nor local; this node cannot attach it", pv.Name)
}

func volumeMode(item *int32, def *int32) os.FileMode {
	switch {
	case item != nil:
		return os.FileMode(*item)
	case def != nil:
		return os.FileMode(*def)
	}
	return defaultVolumeMode
}

// keyFiles selects and names the keys of a ConfigMap or Secret.
func keyFiles(kind, name string, data map[string][]byte, items []corev1.KeyToPath, defMode *int32) (map[string]fileContent, error) {
	out := map[string]fileContent{}
	if len(items) == 0 {
		for k, d := range data {
			out[k] = fileContent{data: d, mode: volumeMode(nil, defMode)}
		}
		return out, nil
	}
	for _, it := range items {
		d, ok := data[it.Key]
		if !ok {
			return nil, fmt.Errorf("%s %s has no key %q", kind, name, it.Key)
		}
		out[it.Path] = fileContent{data: d, mode: volumeMode(it.Mode, defMode)}
	}
	return out, nil
}

func (v *podVolumes) configMapFiles(ctx context.Context, name string, items []corev1.KeyToPath, optional *bool, defMode *int32) (map[string]fileContent, error) {
	cm, err := v.src.ConfigMap(ctx, v.pod.Namespace, name)
	if err != nil {
		if apierrors.IsNotFound(err) && isOptional(optional) {
			return map[string]fileContent{}, nil
		}
		return nil, fmt.Errorf("configmap %s: %w", name, err)
	}
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, d := range cm.Data {
		data[k] = []byte(d)
	}
	for k, d := range cm.BinaryData {
		data[k] = d
	}
	return keyFiles("configmap", name, data, items, defMode)
}

func (v *podVolumes) secretFiles(ctx context.Context, name string, items []corev1.KeyToPath, optional *bool, defMode *int32) (map[string]fileContent, error) {
	s, err := v.src.Secret(ctx, v.pod.Namespace, name)
	if err != nil {
		if apierrors.IsNotFound(err) && isOptional(optional) {
			return map[string]fileContent{}, nil
		}
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	return keyFiles("secret", name, s.Data, items, defMode)
}

func (v *podVolumes) downwardFiles(items []corev1.DownwardAPIVolumeFile, defMode *int32) (map[string]fileContent, error) {
	out := map[string]fileContent{}
	for _, it := range items {
		var val string
		var err error
		switch {
		case it.FieldRef != nil:
			val, err = podField(v.pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			c := findContainer(v.pod, it.ResourceFieldRef.ContainerName)
			if c == nil {
				return nil, fmt.Errorf("downward API item %s: no container %q", it.Path, it.ResourceFieldRef.ContainerName)
			}
			val, err = containerResource(c, it.ResourceFieldRef)
		}
		if err != nil {
			return nil, fmt.Errorf("downward API item %s: %w", it.Path, err)
		}
		out[it.Path] = fileContent{data: []byte(val), mode: volumeMode(it.Mode, defMode)}
	}
	return out, nil
}

func (v *podVolumes) projectedFiles(ctx context.Context, volName string, p *corev1.ProjectedVolumeSource) (map[string]fileContent, error) {
	out := map[string]fileContent{}
	merge := func(files map[string]fileContent) {
		for k, f := range files {
			out[k] = f
		}
	}
	for _, s := range p.Sources {
		switch {
		case s.ConfigMap != nil:
			files, err := v.configMapFiles(ctx, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional, p.DefaultMode)
			if err != nil {
				return nil, err
			}
			merge(files)
		case s.Secret != nil:
			files, err := v.secretFiles(ctx, s.Secret.Name, s.Secret.Items, s.Secret.Optional, p.DefaultMode)
			if err != nil {
				return nil, err
			}
			merge(files)
		case s.DownwardAPI != nil:
			files, err := v.downwardFiles(s.DownwardAPI.Items, p.DefaultMode)
			if err != nil {
				return nil, err
			}
			merge(files)
		case s.ServiceAccountToken != nil:
			tok, err := v.token(ctx, volName, s.ServiceAccountToken)
			if err != nil {
				return nil, err
			}
			out[s.ServiceAccountToken.Path] = fileContent{data: []byte(tok), mode: volumeMode(nil, p.DefaultMode)}
		default:
			return nil, fmt.Errorf("unsupported projected source (this node supports configMap, secret, downwardAPI and serviceAccountToken)")
		}
	}
	return out, nil
}

// token returns a bound service-account token, reusing the last one until
// 80% of its lifetime has passed, as the kubelet's token manager does.
func (v *podVolumes) token(ctx context.Context, volName string, p *corev1.ServiceAccountTokenProjection) (string, error) {
	key := volName + "/" + p.Path
	ttl := defaultTokenTTL
	if p.ExpirationSeconds != nil {
		ttl = *p.ExpirationSeconds
	}
	if c, ok := v.tokens[key]; ok && v.now().Before(c.issued.Add(c.lifetime*8/10)) {
		return c.token, nil
	}
	tok, err := v.src.ServiceAccountToken(ctx, v.pod, p.Audience, ttl)
	if err != nil {
		return "", fmt.Errorf("service account token for %s: %w", v.pod.Spec.ServiceAccountName, err)
	}
	v.tokens[key] = cachedToken{token: tok, issued: v.now(), lifetime: time.Duration(ttl) * time.Second}
	return tok, nil
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.Containers {
		if name == "" || pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}
