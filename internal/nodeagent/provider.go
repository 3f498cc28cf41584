package nodeagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// minTerminationGrace mirrors the kubelet's floor for a zero grace period.
const minTerminationGrace = 2 * time.Second

// provider is the virtual-kubelet pod lifecycle handler: it turns pods bound
// to this node into podRuntimes and reports their status back.
type provider struct {
	deps    *runtimeDeps
	ips     *ipPool
	podsDir string
	client  kubernetes.Interface
	changed func() // the set of pods on the node changed

	mu     sync.Mutex
	pods   map[string]*podRuntime
	notify func(*corev1.Pod)
}

func newProvider(deps *runtimeDeps, ips *ipPool, podsDir string, client kubernetes.Interface, changed func()) *provider {
	p := &provider{deps: deps, ips: ips, podsDir: podsDir, client: client, changed: changed, pods: map[string]*podRuntime{}}
	deps.notify = func(pod *corev1.Pod) {
		p.mu.Lock()
		cb := p.notify
		p.mu.Unlock()
		if cb != nil {
			cb(pod)
		}
	}
	return p
}

// NotifyPods implements node.PodNotifier.
func (p *provider) NotifyPods(_ context.Context, cb func(*corev1.Pod)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notify = cb
}

// CreatePod implements node.PodLifecycleHandler.
func (p *provider) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	key := pod.Namespace + "/" + pod.Name
	p.mu.Lock()
	old := p.pods[key]
	p.mu.Unlock()
	if old != nil {
		if old.spec().UID == pod.UID {
			old.setPod(pod)
			return nil
		}
		// A pod of the same name was force-deleted and recreated before the
		// old one's processes were gone: finish the old one first.
		select {
		case <-old.stop(minTerminationGrace):
		case <-ctx.Done():
			return ctx.Err()
		}
		p.finalize(old, false)
	}

	ip := p.deps.nodeIP // a hostNetwork pod has the node's address
	if !pod.Spec.HostNetwork {
		addr, err := p.ips.allocate(string(pod.UID))
		if err != nil {
			return err
		}
		ip = addr.String()
	}
	dir := filepath.Join(p.podsDir, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
	pr := newPodRuntime(p.deps, pod, ip, dir)
	p.mu.Lock()
	p.pods[key] = pr
	p.mu.Unlock()
	go pr.run()
	p.changed()
	return nil
}

// UpdatePod implements node.PodLifecycleHandler.
func (p *provider) UpdatePod(_ context.Context, pod *corev1.Pod) error {
	pr := p.lookup(pod.Namespace, pod.Name, pod.UID)
	if pr == nil {
		return errdefs.NotFoundf("pod %s/%s is not on this node", pod.Namespace, pod.Name)
	}
	pr.setPod(pod)
	p.changed()
	return nil
}

// DeletePod implements node.PodLifecycleHandler: containers get SIGTERM,
// then SIGKILL after the grace period, and once they are gone the pod object
// is removed from the API, as the kubelet does.
func (p *provider) DeletePod(_ context.Context, pod *corev1.Pod) error {
	pr := p.lookup(pod.Namespace, pod.Name, pod.UID)
	if pr == nil {
		return errdefs.NotFoundf("pod %s/%s is not on this node", pod.Namespace, pod.Name)
	}
	grace := 30 * time.Second
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		grace = time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	grace = max(grace, minTerminationGrace)
	done := pr.stop(grace)
	go func() {
		<-done
		p.finalize(pr, pod.DeletionTimestamp != nil)
	}()
	return nil
}

// finalize publishes a stopped pod's last status, removes the pod object
// (when its deletion was requested through the API) and frees its address
// and directory.
func (p *provider) finalize(pr *podRuntime, deleteObject bool) {
	pr.finalize.Do(func() {
		final := pr.snapshot()
		p.deps.notify(final)
		if deleteObject {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			uid := final.UID
			err := p.client.CoreV1().Pods(final.Namespace).Delete(ctx, final.Name, metav1.DeleteOptions{
				GracePeriodSeconds: new(int64),
				Preconditions:      &metav1.Preconditions{UID: &uid},
			})
			cancel()
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				p.deps.log.Error("Failed to remove terminated pod", "pod", pr.key, "err", err)
			}
		}
		p.mu.Lock()
		if p.pods[pr.key] == pr {
			delete(p.pods, pr.key)
		}
		p.mu.Unlock()
		pr.releaseNetwork()
		p.ips.release(string(final.UID))
		if err := os.RemoveAll(pr.dir); err != nil {
			p.deps.log.Error("Failed to remove pod directory", "pod", pr.key, "err", err)
		}
		p.changed()
	})
}

func (p *provider) lookup(namespace, name string, uid types.UID) *podRuntime {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.pods[namespace+"/"+name]
	if pr == nil || (uid != "" && pr.spec().UID != uid) {
		return nil
	}
	return pr
}

// GetPod implements node.PodLifecycleHandler.
func (p *provider) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	p.mu.Lock()
	pr := p.pods[namespace+"/"+name]
	p.mu.Unlock()
	if pr == nil {
		return nil, errdefs.NotFoundf("pod %s/%s is not on this node", namespace, name)
	}
	return pr.snapshot(), nil
}

// GetPodStatus implements node.PodLifecycleHandler.
func (p *provider) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	pod, err := p.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

// GetPods implements node.PodLifecycleHandler.
func (p *provider) GetPods(context.Context) ([]*corev1.Pod, error) {
	p.mu.Lock()
	runtimes := make([]*podRuntime, 0, len(p.pods))
	for _, pr := range p.pods {
		runtimes = append(runtimes, pr)
	}
	p.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(runtimes))
	for _, pr := range runtimes {
		out = append(out, pr.snapshot())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name })
	return out, nil
}

// runtimeFor returns the running pod behind the kubelet API's requests.
func (p *provider) runtimeFor(namespace, name string) (*podRuntime, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.pods[namespace+"/"+name]
	if pr == nil {
		return nil, errdefs.NotFoundf("pod %s/%s is not on this node", namespace, name)
	}
	return pr, nil
}

// all returns every pod runtime.
func (p *provider) all() []*podRuntime {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*podRuntime, 0, len(p.pods))
	for _, pr := range p.pods {
		out = append(out, pr)
	}
	return out
}

// shutdown stops every pod within grace without touching the API (the
// node is going away, and usually the cluster with it).
func (p *provider) shutdown(grace time.Duration) {
	var wg sync.WaitGroup
	for _, pr := range p.all() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-pr.stop(grace)
			pr.releaseNetwork()
			_ = os.RemoveAll(pr.dir)
		}()
	}
	wg.Wait()
}
