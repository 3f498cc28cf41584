package nodeagent

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// endpoint is one pod behind a Service.
type endpoint struct {
	pod   *corev1.Pod
	ip    string
	ready bool
}

// serviceEndpoints selects a Service's pods the way the EndpointSlice
// controller does: same namespace, selector match, an IP, not finished, and
// not terminating (unless the Service publishes not-ready addresses).
//
// The node's names and its service proxy read this view of the pods it
// runs rather than the EndpointSlices the controller publishes (which fill
// in too): it is current the moment a pod's readiness changes, needs no
// access beyond the node's own, and keeps the hosts files and the proxy in
// step with each other. On one node it selects the same pods.
func serviceEndpoints(svc *corev1.Service, pods []*corev1.Pod) []endpoint {
	if len(svc.Spec.Selector) == 0 {
		return nil
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	var out []endpoint
	for _, p := range pods {
		if p.Namespace != svc.Namespace || p.Status.PodIP == "" || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if p.DeletionTimestamp != nil && !svc.Spec.PublishNotReadyAddresses {
			continue
		}
		out = append(out, endpoint{pod: p, ip: p.Status.PodIP, ready: podReady(p)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pod.Name < out[j].pod.Name })
	return out
}

// publishable reports whether cluster DNS would answer with this endpoint.
func (e endpoint) publishable(svc *corev1.Service) bool {
	return e.ready || svc.Spec.PublishNotReadyAddresses
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
