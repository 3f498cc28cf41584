package nodeagent

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fakeSource is an objectSource backed by maps, standing in for
// kube-apiserver in tests that need no cluster.
type fakeSource struct {
	mu         sync.Mutex
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
	claims     map[string]*corev1.PersistentVolumeClaim
	volumes    map[string]*corev1.PersistentVolume
	services   []*corev1.Service
	tokens     int
}

func newFakeSource() *fakeSource {
	return &fakeSource{
		configMaps: map[string]*corev1.ConfigMap{},
		secrets:    map[string]*corev1.Secret{},
		claims:     map[string]*corev1.PersistentVolumeClaim{},
		volumes:    map[string]*corev1.PersistentVolume{},
	}
}

func notFound(resource, name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}

func (f *fakeSource) ConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cm, ok := f.configMaps[ns+"/"+name]; ok {
		return cm.DeepCopy(), nil
	}
	return nil, notFound("configmaps", name)
}

func (f *fakeSource) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.secrets[ns+"/"+name]; ok {
		return s.DeepCopy(), nil
	}
	return nil, notFound("secrets", name)
}

func (f *fakeSource) PersistentVolumeClaim(_ context.Context, ns, name string) (*corev1.PersistentVolumeClaim, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.claims[ns+"/"+name]; ok {
		return c.DeepCopy(), nil
	}
	return nil, notFound("persistentvolumeclaims", name)
}

func (f *fakeSource) PersistentVolume(_ context.Context, name string) (*corev1.PersistentVolume, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v, ok := f.volumes[name]; ok {
		return v.DeepCopy(), nil
	}
	return nil, notFound("persistentvolumes", name)
}

func (f *fakeSource) ServiceAccountToken(_ context.Context, pod *corev1.Pod, audience string, ttl int64) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens++
	return fmt.Sprintf("token-%d-for-%s-%s-aud=%s-ttl=%d", f.tokens, pod.Namespace, pod.Name, audience, ttl), nil
}

func (f *fakeSource) Services(ns string) ([]*corev1.Service, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*corev1.Service
	for _, s := range f.services {
		if s.Namespace == ns {
			out = append(out, s)
		}
	}
	return out, nil
}

func (f *fakeSource) tokenCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokens
}
